//! The oracles: omniscient, read-only checkers of a run (`docs/rules.md` P4).
//!
//! They watch every trace event as it is recorded ([`Oracles::observe`], incremental and cheap)
//! and judge what can only be judged at the end in [`Oracles::finish`]. They never change the
//! run: the world hands them events, never the other way round. A violation names its
//! invariant, the time, the actors and the index of the trace event where it first failed.

mod at_least_once;
mod cancel_markers;
mod checkpoint_failures;
mod consistent_cut;
mod failover_scope;
pub mod invariant;
pub(crate) mod job_status;
mod output_order;
pub(crate) mod reconcile_outcome;
mod records;
mod reference;
mod reports;
mod restore_shape;
mod rpc_order;
mod savepoint;
mod splits;
mod trigger_at_once;
mod uploads;

use crate::checkpoint::storage::CheckpointStorage;
use crate::faults::FaultPlan;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::jobmaster::transitions;
use crate::record::{Element, Record};
use crate::scenario::{Delivery, FinishProtocol};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{AbortReason, Address, Call, DeclineReason, Rpc, TraceEvent};
use crate::world::Config;
use consistent_cut::{per_channel, Cut, SpareCuts};
use invariant::Invariant;
use sim::Instant;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: Invariant,
    pub time: Instant,
    /// The actors involved, written as in traces (`map[0]`, `JobMaster`).
    pub actors: Vec<String>,
    /// Index of the trace event where the violation was first visible.
    pub event_index: u64,
    pub message: String,
}

/// A record that became a sink's output (received by an at-least-once sink, committed by a
/// two-phase-commit sink): which sink vertex, the record, and the trace event.
#[derive(Clone, Copy, Debug)]
struct Sunk {
    vertex: u32,
    record: Record,
    event_index: u64,
}

pub struct Oracles {
    protocol: Option<FinishProtocol>,
    /// Checkpoints are at least once (F1.7): a cut may hold more than the producer sent
    /// before its barrier, and a restore may replay output.
    at_least_once: bool,
    /// How each subtask's output counts: `None` for non-sinks.
    sink: Vec<Option<Delivery>>,
    /// The subtask's chain is its sink alone, so what it takes is output (F1.12).
    sink_heads: Vec<bool>,
    is_source: Vec<bool>,
    /// Records each source subtask emitted (sources emit sequence numbers in order).
    emitted: Vec<u64>,
    sunk: Vec<Sunk>,
    /// Per channel, records pushed and records taken so far.
    sent: Vec<u64>,
    processed: Vec<u64>,
    cuts: BTreeMap<u64, Cut>,
    /// The per-channel arrays of cuts settled before, for the next checkpoints' (`Cut::new`).
    spare_cuts: SpareCuts,
    /// Per subtask: the attempt and checkpoint of its latest snapshot.
    last_snapshot: Vec<Option<(u32, u64)>>,
    /// (subtask, attempt, checkpoint): the attempt was told that the checkpoint was aborted
    /// (the notice reached its TaskManager), so it must not snapshot it any more.
    told_aborted: std::collections::BTreeSet<(u32, u32, u64)>,
    /// Per subtask: its attempt really reached FINISHED.
    finished: Vec<bool>,
    /// `option2`: the subtask's "finishing" report reached the coordinator.
    reported_finishing: Vec<bool>,
    /// Per subtask: a completed checkpoint holds a snapshot taken after its end of input.
    final_covered: Vec<bool>,
    /// Every completed checkpoint's finished subtasks, by id.
    completed: BTreeMap<u64, Vec<SubtaskId>>,
    /// The latest completed checkpoint and, per channel, how many records its cut holds on
    /// the producer's and the consumer's side (channel state aside): where a restore from it
    /// rewinds the channel to. Restored channel state is sent and replayed again on top.
    positions: (u64, Vec<(u64, u64)>),
    /// When each checkpoint was triggered.
    triggered_at: BTreeMap<u64, Instant>,
    /// Checkpoints triggered that have neither completed nor been aborted yet.
    open: std::collections::BTreeSet<u64>,
    /// Per subtask: recorded finished in a checkpoint the job restored from, so it must never
    /// process or emit a record again (`finished-not-rerun`). Cleared once reported.
    must_stay_finished: Vec<bool>,
    /// A failover happened: at-least-once sinks may hold duplicates from then on.
    failed_over: bool,
    /// `no-lost-rpc` (P3.3): RPCs a JobMaster refused (or none was there to take), by their
    /// TaskManager, not yet applied: the trace index and time of the first refusal.
    owed: Vec<(u32, Rpc, u64, Instant)>,
    /// Refused RPCs that were applied since, to catch one applied twice.
    settled: Vec<(u32, Rpc)>,
    /// Under reconciliation (P3.1), how long TaskManagers keep terminal task states.
    retention: Option<sim::Duration>,
    /// The latest election, and which subtasks have been reported to it (P3.2).
    elected_at: Option<Instant>,
    /// The JobMaster is RECONCILING (P3.3: it applies reports only).
    reconciling: bool,
    reported: Vec<bool>,
    /// `rpc-order`: the oracle's own ledger of RPC sends.
    rpc_order: rpc_order::RpcOrder,
    /// `trigger-at-once` (F1.4), under `flink` only.
    trigger_at_once: Option<trigger_at_once::TriggerAtOnce>,
    /// `failover-scope` (P1.8).
    failover_scope: failover_scope::FailoverScope,
    /// `split-ownership` and the split records' ledger (F1.13), for a job whose sources read
    /// splits.
    splits: Option<splits::Splits>,
    /// `restore-shape` (F1.6), for a job submitted with a checkpoint.
    restore_shape: Option<restore_shape::RestoreShape>,
    /// What such a job starts from, for the reference output, when it may start.
    restored: Option<reference::Restored>,
    /// F1.8, with asynchronous snapshot parts only.
    uploads: Option<uploads::Uploads>,
    /// `cancel-markers` (F1.10), with `checkpointing.cancel_markers` on.
    cancel_markers: Option<cancel_markers::CancelMarkers>,
    /// `stop-with-savepoint` (F1.11), with a `stop_with_savepoint` fault only.
    savepoints: Option<savepoint::Savepoints>,
    /// `checkpoint-failures` (F1.9), when checkpointing is on.
    checkpoint_failures: Option<checkpoint_failures::CheckpointFailures>,
    /// `reconcile-outcome` (P3.4), under `failover: reconcile` only.
    reconcile_outcome: Option<reconcile_outcome::ReconcileOutcome>,
    /// `reconcile-outcome`: what each report says (P3.1, P3.2); under reconciliation only.
    reports: Option<reports::Reports>,
    /// `job-status`: every fault that fired, in order.
    fired: Vec<crate::trace::FaultEvent>,
    /// P1.8: `restart_strategy.max_attempts`.
    max_attempts: u32,
    /// `job-status`: the restarts each JobMaster made, counted here.
    restarts: job_status::Restarts,
    /// P1.1: `checkpointing.min_pause`, and when the current coordinator last completed one.
    min_pause: sim::Duration,
    last_completed_at: Option<Instant>,
    violations: Vec<Violation>,
    /// How many violations of each invariant are kept, and how many more were found past
    /// [`MAX_KEPT_PER_INVARIANT`] and only counted.
    kept_per_invariant: BTreeMap<Invariant, usize>,
    unkept: u64,
    /// No oracle that watches records beyond the counts below is on (`uploads`,
    /// `cancel-markers`, `stop-with-savepoint`, the split ledger, reconciliation): a record's
    /// push, arrival or take then takes the short path in [`Oracles::observe`].
    plain_records: bool,
}

/// The most violations of one invariant a run keeps. A bug that breaks a rule on every event
/// would otherwise grow the list (and memory) without bound; the first ones are the useful ones,
/// and a cap per invariant rather than in all keeps every invariant that broke.
pub const MAX_KEPT_PER_INVARIANT: usize = 1_000;

impl Oracles {
    pub fn new(graph: &ExecutionGraph, config: Config) -> Oracles {
        let chain = |s: &crate::graph::Subtask| &graph.vertices[s.vertex.index()].chain;
        let n = graph.subtasks.len();
        let mut oracles = Oracles {
            protocol: config.protocol,
            at_least_once: config.at_least_once,
            sink: graph.subtasks.iter().map(|s| chain(s).sink()).collect(),
            sink_heads: graph.subtasks.iter().map(|s| chain(s).len() == 1).collect(),
            // F1.13: a split reader's records are accounted per split, in `splits`.
            is_source: graph
                .subtasks
                .iter()
                .map(|s| chain(s).is_source() && graph.vertices[s.vertex.index()].splits.is_none())
                .collect(),
            emitted: vec![0; n],
            sunk: Vec::new(),
            sent: per_channel(graph.channels.len(), 0, true),
            processed: per_channel(graph.channels.len(), 0, true),
            cuts: BTreeMap::new(),
            spare_cuts: Vec::new(),
            last_snapshot: vec![None; n],
            told_aborted: std::collections::BTreeSet::new(),
            finished: vec![false; n],
            reported_finishing: vec![false; n],
            completed: BTreeMap::new(),
            positions: (0, per_channel(graph.channels.len(), (0, 0), false)),
            triggered_at: BTreeMap::new(),
            open: std::collections::BTreeSet::new(),
            must_stay_finished: vec![false; n],
            failed_over: false,
            owed: Vec::new(),
            settled: Vec::new(),
            retention: config.retention,
            elected_at: None,
            reconciling: false,
            reported: vec![false; n],
            final_covered: vec![false; n],
            rpc_order: rpc_order::RpcOrder::new(),
            trigger_at_once: (config.protocol == Some(FinishProtocol::Flink))
                .then(|| trigger_at_once::TriggerAtOnce::new(graph)),
            uploads: config.async_duration.map(|_| uploads::Uploads::default()),
            cancel_markers: config
                .cancel_markers
                .then(|| cancel_markers::CancelMarkers::new(graph)),
            savepoints: config
                .stop_with_savepoint
                .then(|| savepoint::Savepoints::new(graph)),
            checkpoint_failures: config.checkpoint_failure_checks.then(|| {
                checkpoint_failures::CheckpointFailures::new(graph, config.tolerable_failures)
            }),
            failover_scope: failover_scope::FailoverScope::new(
                graph,
                config.failover_scope,
                config.task_managers as usize,
            ),
            reports: config.retention.map(|retention| {
                reports::Reports::new(graph, config.task_managers as usize, retention)
            }),
            reconcile_outcome: config.retention.map(|_| {
                reconcile_outcome::ReconcileOutcome::new(
                    graph,
                    config.task_managers as usize,
                    config.reconcile_timeout,
                )
            }),
            splits: splits::Splits::new(graph),
            restore_shape: None,
            restored: None,
            fired: Vec::new(),
            max_attempts: config.max_attempts,
            restarts: job_status::Restarts::default(),
            min_pause: config.min_pause,
            last_completed_at: None,
            violations: Vec::new(),
            kept_per_invariant: BTreeMap::new(),
            unkept: 0,
            plain_records: false,
        };
        oracles.plain_records = oracles.uploads.is_none()
            && oracles.cancel_markers.is_none()
            && oracles.savepoints.is_none()
            && oracles.splits.is_none()
            && oracles.retention.is_none();
        oracles
    }

    /// The job is submitted with checkpoint `restore` (F1.6): `restore-shape` judges whether
    /// it starts, and, if it must, the checkpoint counts as completed with the finished
    /// subtasks the oracle works out itself, and every channel starts empty.
    pub fn restore_from(&mut self, graph: &ExecutionGraph, restore: &crate::scenario::RestoreFrom) {
        let shape = restore_shape::RestoreShape::new(graph, restore);
        if let Some((checkpoint, finished)) = shape.accepted() {
            self.completed.insert(checkpoint, finished.to_vec());
            self.positions.0 = checkpoint;
        }
        if let Some((_, finished)) = shape.accepted() {
            self.restored = Some(reference::Restored::new(graph, restore, finished));
        }
        self.restore_shape = Some(shape);
    }

    /// `rpc` is handed to the link `from → to`, for the receiver's process `process`, now (a
    /// first send or a resend): the send ledger of `rpc-order` and `failover-scope`, since the
    /// trace records an RPC only on delivery.
    #[inline]
    pub fn observe_send(
        &mut self,
        from: Address,
        to: Address,
        process: u32,
        rpc: Rpc,
        now: Instant,
    ) {
        self.rpc_order.sent(from, to, rpc, now);
        self.failover_scope.sent(to, process, rpc);
        if let Some(r) = self.reconcile_outcome.as_mut() {
            r.sent(to, rpc);
        }
        if let Some(r) = self.reports.as_mut() {
            r.sent((from, to), rpc, now);
        }
        if let Some(u) = self.uploads.as_mut() {
            u.sent(rpc);
        }
        if let Some(s) = self.savepoints.as_mut() {
            s.sent(rpc);
        }
    }

    /// Sees one trace event as it is recorded.
    // `always`: on the hot path of every recorded event (see `observe_each`).
    #[inline(always)]
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        storage: &CheckpointStorage,
        faults: &FaultPlan,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) {
        // The records' hot path (most events of a run): with no oracle on that watches records
        // beyond the counts, a record's push, arrival or take goes straight to them. Each arm
        // does what the full path below does with that event, in the same order.
        if self.plain_records {
            match *event {
                TraceEvent::Push {
                    channel,
                    element: Element::Record(record),
                } if !self.must_stay_finished[graph.channels[channel.index()].from.index()] => {
                    return self.pushed_record(graph, channel, record);
                }
                TraceEvent::Take {
                    subtask,
                    channel,
                    element: Element::Record(record),
                } if !self.must_stay_finished[subtask.index()] => {
                    if !self
                        .trigger_at_once
                        .as_ref()
                        .is_none_or(|t| t.awaits_nothing())
                    {
                        self.observe_trigger_at_once(graph, index, now, event);
                    }
                    return self.took_record(graph, subtask, channel, record, index);
                }
                TraceEvent::Arrive {
                    element: Element::Record(_),
                    ..
                } => return,
                _ => {}
            }
        }
        if let Some(v) = self
            .uploads
            .as_mut()
            .and_then(|u| u.observe(graph, index, now, event))
        {
            self.violate(v);
        }
        if let Some(v) = self
            .cancel_markers
            .as_mut()
            .and_then(|c| c.observe(graph, index, now, event))
        {
            self.violate(v);
        }
        if let Some(v) = self
            .savepoints
            .as_mut()
            .and_then(|s| s.observe(graph, index, now, event))
        {
            self.violate(v);
        }
        if let Some(v) = self
            .splits
            .as_mut()
            .and_then(|s| s.observe(graph, index, now, event))
        {
            self.violate(v);
        }
        // Only these concern `checkpoint-failures`: the records' hot path skips the call.
        if self.checkpoint_failures.is_some()
            && matches!(
                event,
                TraceEvent::JobStatus { .. }
                    | TraceEvent::JobMasterElected { .. }
                    | TraceEvent::ExecutionState { .. }
                    | TraceEvent::TaskState { .. }
                    | TraceEvent::Snapshot { .. }
                    | TraceEvent::FaultFired { .. }
                    | TraceEvent::Rpc {
                        to: Address::JobMaster,
                        ..
                    }
                    | TraceEvent::CheckpointTriggered { .. }
                    | TraceEvent::SavepointTriggered { .. }
                    | TraceEvent::CheckpointCompleted { .. }
                    | TraceEvent::CheckpointAborted { .. }
                    | TraceEvent::CheckpointFailuresExceeded { .. }
                    | TraceEvent::Failover { .. }
            )
        {
            if let Some(v) = self
                .checkpoint_failures
                .as_mut()
                .and_then(|c| c.observe(graph, index, now, event))
            {
                self.violate(v);
            }
        }
        if self.retention.is_some() {
            self.observe_reconciliation(graph, index, now, event);
            if let Some(v) = self
                .reconcile_outcome
                .as_mut()
                .and_then(|r| r.observe(graph, index, now, event))
            {
                self.violate(v);
            }
            if let Some(message) = self
                .reports
                .as_mut()
                .and_then(|r| r.observe(graph, now, event))
            {
                self.violate(Violation {
                    invariant: Invariant::ReconcileOutcome,
                    time: now,
                    actors: vec!["TaskManager".to_owned()],
                    event_index: index,
                    message,
                });
            }
        }
        if matches!(
            event,
            TraceEvent::Rpc { .. }
                | TraceEvent::RpcDropped { .. }
                | TraceEvent::TaskManagerLost { .. }
        ) {
            if let Some(v) = self.rpc_order.observe(graph, index, now, event) {
                self.violate(v);
            }
        }
        self.observe_trigger_at_once(graph, index, now, event);
        // Only these concern `restore-shape`: every other event skips the call.
        if matches!(
            event,
            TraceEvent::RestoreRejected { .. } | TraceEvent::JobStatus { .. }
        ) {
            if let Some(v) = self
                .restore_shape
                .as_mut()
                .and_then(|r| r.observe(index, now, event))
            {
                self.violate(v);
            }
        }
        // Only status changes and process deaths concern `failover-scope`: the records' hot
        // path skips the call.
        if matches!(
            event,
            TraceEvent::JobStatus { .. }
                | TraceEvent::ExecutionState { .. }
                | TraceEvent::TaskState { .. }
                | TraceEvent::TaskManagerLost { .. }
                | TraceEvent::JobMasterLost { .. }
                | TraceEvent::JobMasterElected { .. }
        ) {
            if let Some(v) = self.failover_scope.observe(graph, index, now, event) {
                self.violate(v);
            }
        }
        if let TraceEvent::FaultFired { fault, .. } = *event {
            self.fired.push(fault);
        }
        if let TraceEvent::Rpc {
            to: Address::TaskManager(_),
            rpc:
                Rpc {
                    subtask,
                    attempt,
                    call: Call::NotifyCheckpointAborted(n),
                },
            ..
        } = *event
        {
            self.told_aborted.insert((subtask.0, attempt, n));
        }
        if let TraceEvent::RestartsExhausted { failovers } = *event {
            if let Some(v) = job_status::gave_up(failovers, self.max_attempts, now, index) {
                self.violate(v);
            }
        }
        if let Some(v) = self
            .restarts
            .observe(event, self.max_attempts, (now, index))
        {
            self.violate(v);
        }
        match *event {
            TraceEvent::Push {
                channel,
                element: Element::Record(record),
            } if self.must_stay_finished[graph.channels[channel.index()].from.index()] => {
                let from = graph.channels[channel.index()].from;
                self.rerun(
                    graph,
                    from,
                    &format!("emitted {}", describe_record(graph, &record)),
                    index,
                    now,
                );
            }
            TraceEvent::Take {
                subtask,
                element: Element::Record(record),
                ..
            } if self.must_stay_finished[subtask.index()] => {
                self.rerun(
                    graph,
                    subtask,
                    &format!("processed {}", describe_record(graph, &record)),
                    index,
                    now,
                );
            }
            _ => {}
        }
        match *event {
            TraceEvent::Push {
                channel,
                element: Element::Record(record),
            } => self.pushed_record(graph, channel, record),
            // The producer's side of the cut on a channel is what precedes its barrier there:
            // records emitted before the snapshot may still wait in the task's output queue
            // (back-pressure) and are pushed before the barrier (P1.4 aligned).
            TraceEvent::Push {
                channel,
                element: Element::Barrier(n) | Element::PriorityBarrier(n),
            } => {
                if let Some(cut) = self.cuts.get_mut(&n) {
                    cut.sent[channel.index()] = self.sent[channel.index()];
                }
            }
            // P1.2 option2: the coordinator counts a subtask finished when its "finishing"
            // report arrives; it is at end of input and its state is final from then on.
            TraceEvent::Rpc {
                rpc:
                    Rpc {
                        subtask,
                        call: Call::Finishing,
                        ..
                    },
                ..
            } => self.reported_finishing[subtask.index()] = true,
            TraceEvent::Take {
                subtask,
                channel,
                element: Element::Record(record),
            } => self.took_record(graph, subtask, channel, record, index),
            TraceEvent::Commit {
                subtask, record, ..
            }
            | TraceEvent::ChainedSink { subtask, record } => self.sunk.push(Sunk {
                vertex: graph.subtasks[subtask.index()].vertex.0,
                record,
                event_index: index,
            }),
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                finished,
            } => {
                // Barriers of one attempt arrive in checkpoint order and a stale one is
                // dropped: an attempt snapshots each checkpoint at most once, in increasing
                // order (P1.3, P1.4).
                if let Some((a, n)) = self.last_snapshot[subtask.index()] {
                    if a == attempt && checkpoint <= n {
                        self.violate(Violation {
                            invariant: Invariant::ConsistentCut,
                            time: now,
                            actors: vec![graph.subtask_name(subtask).to_string()],
                            event_index: index,
                            message: format!(
                                "{} attempt {attempt} snapshotted checkpoint {checkpoint} after \
                                 checkpoint {n}: an attempt snapshots each checkpoint once, in \
                                 order (P1.3)",
                                graph.subtask_name(subtask)
                            ),
                        });
                    }
                }
                // F1.7 step 6, F1.10 step 2: an attempt told that a checkpoint was aborted
                // takes no snapshot of it any more (Flink's task checks its aborted ids where
                // it would snapshot, and sends a cancellation marker instead).
                if self
                    .told_aborted
                    .contains(&(subtask.0, attempt, checkpoint))
                {
                    self.violate(Violation {
                        invariant: Invariant::ConsistentCut,
                        time: now,
                        actors: vec![graph.subtask_name(subtask).to_string()],
                        event_index: index,
                        message: format!(
                            "{} attempt {attempt} snapshotted checkpoint {checkpoint} after it \
                             was told that checkpoint {checkpoint} was aborted: a task does not \
                             snapshot an aborted checkpoint (F1.7 step 6, F1.10 step 2)",
                            graph.subtask_name(subtask)
                        ),
                    });
                }
                self.last_snapshot[subtask.index()] = Some((attempt, checkpoint));
                self.snapshot(graph, subtask, checkpoint, finished)
            }
            TraceEvent::CheckpointTriggered { checkpoint } => {
                self.triggered_at.insert(checkpoint, now);
                self.open.insert(checkpoint);
                // P1.1: no trigger sooner than `min_pause` after the coordinator's last
                // completion.
                // F1.11: a savepoint is forced; `min_pause` does not hold it back.
                let forced = self
                    .savepoints
                    .as_ref()
                    .is_some_and(|s| s.is_savepoint(checkpoint));
                if let Some(done) = self
                    .last_completed_at
                    .filter(|&t| !forced && now.saturating_duration_since(t) < self.min_pause)
                {
                    self.violate(Violation {
                        invariant: Invariant::CheckpointProgress,
                        time: now,
                        actors: vec!["CheckpointCoordinator".to_owned()],
                        event_index: index,
                        message: format!(
                            "checkpoint {checkpoint} was triggered {} after the last completion \
                             (at {done}), sooner than min_pause {} (P1.1)",
                            now.saturating_duration_since(done),
                            self.min_pause
                        ),
                    });
                }
            }
            // A completion is announced only for a completed checkpoint, and a completed one is
            // never announced aborted (P1.7: a sink commits on the first, rolls back on the
            // second).
            TraceEvent::Rpc {
                rpc:
                    Rpc {
                        subtask,
                        call:
                            call
                            @ (Call::NotifyCheckpointComplete(n) | Call::NotifyCheckpointAborted(n)),
                        ..
                    },
                ..
            } if self.completed.contains_key(&n)
                != matches!(call, Call::NotifyCheckpointComplete(_)) =>
            {
                self.violate(Violation {
                    invariant: Invariant::CheckpointProgress,
                    time: now,
                    actors: vec![graph.subtask_name(subtask).to_string()],
                    event_index: index,
                    message: format!(
                        "{} was told {call:?}, but checkpoint {n} {} (P1.7)",
                        graph.subtask_name(subtask),
                        if self.completed.contains_key(&n) {
                            "completed"
                        } else {
                            "never completed"
                        }
                    ),
                });
            }
            TraceEvent::ChannelState {
                checkpoint,
                channel,
                records,
                output,
                ..
            } => {
                let channels = graph.channels.len();
                let spare = &mut self.spare_cuts;
                let cut = self
                    .cuts
                    .entry(checkpoint)
                    .or_insert_with(|| Cut::new(channels, spare));
                let side = if output {
                    &mut cut.output_state
                } else {
                    &mut cut.input_state
                };
                *side.entry(channel.0).or_insert(0) += u64::from(records);
            }
            TraceEvent::CheckpointCompleted { checkpoint } => {
                let completed = storage
                    .latest()
                    .filter(|c| c.id == checkpoint)
                    .expect("a completed checkpoint is in storage before it is announced");
                self.completed
                    .insert(checkpoint, completed.finished.clone());
                self.last_completed_at = Some(now);
                self.open.remove(&checkpoint);
                self.check_cut(graph, checkpoint, &completed.finished, index, now);
            }
            // A crashed JobManager's coordinator takes its pending checkpoints with it; the
            // next one settles them with the tasks (P3.4), but they have no outcome of their own.
            TraceEvent::JobMasterLost { .. } => self.open.clear(),
            TraceEvent::CheckpointAborted { checkpoint, reason } => {
                if let Some(cut) = self.cuts.remove(&checkpoint) {
                    cut.recycle(&mut self.spare_cuts);
                }
                self.open.remove(&checkpoint);
                let triggered = self.triggered_at.get(&checkpoint).copied();
                let healed = faults.healed_at();
                let in_faulty_phase = match (healed, triggered) {
                    (Some(h), Some(t)) => t < h,
                    _ => true,
                };
                self.check_abort(checkpoint, reason, in_faulty_phase, index, now);
            }
            TraceEvent::Failover { .. } | TraceEvent::JobMasterElected { .. } => {
                self.failed_over = true;
                // A new coordinator measures its pause from its own completions.
                if matches!(event, TraceEvent::JobMasterElected { .. }) {
                    self.last_completed_at = None;
                }
                // P1.2 option2: the coordinator's finished set is rebuilt, not restored.
                for (reported, &finished) in self.reported_finishing.iter_mut().zip(&self.finished)
                {
                    *reported &= finished;
                }
            }
            TraceEvent::Restore {
                checkpoint, region, ..
            } => self.restored(graph, checkpoint, region, index, now),
            TraceEvent::TaskState {
                subtask,
                to: ExecutionState::Finished,
                ..
            } => {
                self.finished[subtask.index()] = true;
                self.check_final_checkpoint(graph, subtask, index, now);
            }
            _ => {}
        }
        match *event {
            TraceEvent::JobStatus { from, to } if !transitions::job(from, to) => {
                self.violate(Violation {
                    invariant: Invariant::LegalTransition,
                    time: now,
                    actors: vec!["JobMaster".to_owned()],
                    event_index: index,
                    message: format!("job status {from} → {to} is not in the job transition table"),
                })
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            }
            | TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } if !transitions::execution(from, to) => {
                let whose = match event {
                    TraceEvent::ExecutionState { .. } => "the JobMaster's view of",
                    _ => "the task",
                };
                self.violate(Violation {
                    invariant: Invariant::LegalTransition,
                    time: now,
                    actors: vec![graph.subtask_name(subtask).to_string()],
                    event_index: index,
                    message: format!(
                        "{whose} {} attempt {attempt} went {from} → {to}, which is not in the execution transition table",
                        graph.subtask_name(subtask)
                    ),
                })
            }
            _ => {}
        }
    }

    /// `finished-not-rerun`: `subtask` was recorded finished in a restored checkpoint, yet it
    /// handles a record again. Reported once per subtask.
    fn rerun(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        what: &str,
        index: u64,
        now: Instant,
    ) {
        self.must_stay_finished[subtask.index()] = false;
        let name = graph.subtask_name(subtask).to_string();
        self.violate(Violation {
            invariant: Invariant::FinishedNotRerun,
            time: now,
            actors: vec![name.clone()],
            event_index: index,
            message: format!(
                "{name} is recorded finished in the checkpoint the job restored from, yet it {what} (P1.8, F1.6)"
            ),
        });
    }

    /// `checkpoint-progress`: once faults have stopped, a checkpoint is aborted only for a
    /// reason its finish protocol allows, and never by expiring.
    fn check_abort(
        &mut self,
        checkpoint: u64,
        reason: AbortReason,
        in_faulty_phase: bool,
        index: u64,
        now: Instant,
    ) {
        let protocol = self.protocol;
        let allowed = match reason {
            AbortReason::Subsumed | AbortReason::JobEnded | AbortReason::Failover => true,
            AbortReason::Declined(DeclineReason::Subsumed) => true,
            // F1.10: a marker only carries on an abort that began elsewhere.
            AbortReason::Declined(DeclineReason::OnCancellationBarrier) => true,
            AbortReason::Expired => in_faulty_phase,
            // F1.9: a trigger by hand to a task not yet running, a snapshot that fails, a
            // trigger to an attempt already gone: each follows a fault.
            AbortReason::Declined(
                DeclineReason::TaskNotReady
                | DeclineReason::TaskFailure
                | DeclineReason::AsyncException,
            )
            | AbortReason::TriggerFailed => in_faulty_phase,
            // F1.2: a missed trigger fails the checkpoint in Flink and before FLIP-147.
            AbortReason::TriggerMissed => {
                matches!(
                    protocol,
                    Some(FinishProtocol::Flink | FinishProtocol::Legacy)
                )
            }
            // F1.8: in any protocol, a task waiting for its uploads to close declines.
            AbortReason::Declined(DeclineReason::TaskClosing) => {
                protocol == Some(FinishProtocol::Flink) || self.uploads.is_some()
            }
            // Legacy P1.6 and F1.3 with the feature off.
            AbortReason::Declined(
                DeclineReason::InputEndOfStream | DeclineReason::TaskFinishing,
            ) => protocol == Some(FinishProtocol::Legacy),
        };
        if allowed {
            return;
        }
        let why = match reason {
            AbortReason::Expired => {
                "it expired without completing after faults had stopped: the protocol stalled".to_owned()
            }
            other => format!(
                "it was aborted ({}), which {} does not allow: finishing tasks must not fail checkpoints (P1.6)",
                other.id(),
                protocol.map_or("a run without checkpointing", |p| p.name())
            ),
        };
        self.violate(Violation {
            invariant: Invariant::CheckpointProgress,
            time: now,
            actors: vec!["CheckpointCoordinator".to_owned()],
            event_index: index,
            message: format!("checkpoint {checkpoint}: {why}"),
        });
    }

    /// `checkpoint-progress`: a task that must wait for a checkpoint covering its final state
    /// (two-phase-commit sinks, P1.7; every task in `flink`, F1.5) does not finish without it.
    fn check_final_checkpoint(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        index: u64,
        now: Instant,
    ) {
        let needs = match self.protocol {
            Some(FinishProtocol::Flink) => true,
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) => {
                self.sink[subtask.index()] == Some(Delivery::TwoPhaseCommit)
            }
            Some(FinishProtocol::Legacy) | None => false,
        };
        if needs && !self.final_covered[subtask.index()] {
            let name = graph.subtask_name(subtask).to_string();
            self.violate(Violation {
                invariant: Invariant::CheckpointProgress,
                time: now,
                actors: vec![name.clone()],
                event_index: index,
                message: format!(
                    "{name} finished before a checkpoint covering its final state completed (P1.7, F1.5 step 3)"
                ),
            });
        }
    }

    /// The reconciliation oracles (P3): `no-lost-rpc` and the retention rule of
    /// `finished-not-rerun`. Only under `failover: reconcile`.
    fn observe_reconciliation(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) {
        match *event {
            TraceEvent::RpcRefused {
                from: Address::TaskManager(tm),
                rpc,
            } if !self.owed.iter().any(|o| (o.0, o.1) == (tm, rpc)) => {
                self.owed.push((tm, rpc, index, now));
            }
            TraceEvent::JobStatus { from, to } => {
                if to == JobStatus::Reconciling {
                    self.reconciling = true;
                } else if from == JobStatus::Reconciling {
                    self.reconciling = false;
                }
            }
            TraceEvent::JobMasterLost { .. } => self.reconciling = false,
            TraceEvent::Rpc {
                from: Address::TaskManager(tm),
                to: Address::JobMaster,
                rpc,
                ..
            } => {
                // P3.3: a reconciling JobMaster applies reports only; everything else waits
                // in the TaskManager's outbox until the view is rebuilt.
                if self.reconciling
                    && !matches!(rpc.call, Call::ReportExecution { .. } | Call::ReportDone)
                {
                    self.violate(Violation {
                        invariant: Invariant::NoLostRpc,
                        time: now,
                        actors: vec![format!("TaskManager{tm}"), "JobMaster".to_owned()],
                        event_index: index,
                        message: format!(
                            "the JobMaster applied TaskManager{tm}'s {:?} about {} while \
                             RECONCILING: it must refuse everything but reports (P3.3)",
                            rpc.call,
                            graph.subtask_name(rpc.subtask)
                        ),
                    });
                }
                self.rpc_applied(graph, tm, rpc, index, now);
                match rpc.call {
                    Call::ReportExecution { .. } => self.reported[rpc.subtask.index()] = true,
                    Call::ReportDone => self.check_retention(graph, tm, index, now),
                    _ => {}
                }
            }
            // P3.3: what a TaskManager kept dies with it; what an attempt owed is moot once
            // the attempt is replaced.
            TraceEvent::TaskManagerLost { task_manager } => {
                self.owed.retain(|o| o.0 != task_manager);
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                to: ExecutionState::Scheduled,
                ..
            } => self
                .owed
                .retain(|o| o.1.subtask != subtask || o.1.attempt >= attempt),
            TraceEvent::JobMasterElected { .. } => {
                self.elected_at = Some(now);
                self.reported.fill(false);
                // Applied once per JobMaster: a question its predecessor took but never
                // answered is asked again (option2's "finishing").
                self.settled.clear();
            }
            _ => {}
        }
    }

    /// `no-lost-rpc`: an RPC from TaskManager `tm` reached the JobMaster; if it had been
    /// refused, it is applied now, and must not be again.
    fn rpc_applied(&mut self, graph: &ExecutionGraph, tm: u32, rpc: Rpc, index: u64, now: Instant) {
        if self.owed.is_empty() && self.settled.is_empty() {
            return;
        }
        if let Some(i) = self.owed.iter().position(|o| (o.0, o.1) == (tm, rpc)) {
            self.owed.swap_remove(i);
            self.settled.push((tm, rpc));
        } else if self.settled.contains(&(tm, rpc)) {
            self.violate(Violation {
                invariant: Invariant::NoLostRpc,
                time: now,
                actors: vec![format!("TaskManager{tm}"), "JobMaster".to_owned()],
                event_index: index,
                message: format!(
                    "TaskManager{tm}'s {:?} about {} attempt {} reached the JobMaster twice after a refusal (P3.3: applied exactly once)",
                    rpc.call,
                    graph.subtask_name(rpc.subtask),
                    rpc.attempt
                ),
            });
        }
    }

    /// P3.1: TaskManager `tm` finished its report to the latest election. Every task it hosts
    /// that finished within the retention before the election must be in it, or the new
    /// JobMaster runs that work again (`finished-not-rerun`).
    fn check_retention(&mut self, graph: &ExecutionGraph, tm: u32, index: u64, now: Instant) {
        let (Some(retention), Some(elected)) = (self.retention, self.elected_at) else {
            return;
        };
        // Where each attempt runs and when it finished: the ledger of what reports must say.
        let Some(reports) = self.reports.as_ref() else {
            return;
        };
        let forgotten = reports
            .finished_on(tm)
            .find(|&(s, f)| !self.reported[s.index()] && f + retention >= elected);
        if let Some((s, f)) = forgotten {
            let name = graph.subtask_name(s).to_string();
            self.violate(Violation {
                invariant: Invariant::FinishedNotRerun,
                time: now,
                actors: vec![name.clone(), format!("TaskManager{tm}")],
                event_index: index,
                message: format!(
                    "{name} finished at {f}, within the terminal-state retention before the election at {elected}, yet TaskManager{tm}'s report omits it: the new JobMaster takes it for lost and runs it again (P3.1)"
                ),
            });
        }
    }

    fn violate(&mut self, violation: Violation) {
        let kept = self
            .kept_per_invariant
            .entry(violation.invariant)
            .or_default();
        if *kept >= MAX_KEPT_PER_INVARIANT {
            self.unkept += 1;
            return;
        }
        *kept += 1;
        self.violations.push(violation);
    }

    /// Violations found and not kept ([`MAX_KEPT_PER_INVARIANT`]).
    pub fn unkept(&self) -> u64 {
        self.unkept
    }

    /// Records source subtask `s` has emitted so far (its high-water mark).
    pub fn emitted(&self, s: SubtaskId) -> u64 {
        self.emitted[s.index()]
    }

    /// Records sunk per sink vertex, in vertex order.
    pub fn sink_counts(&self, graph: &ExecutionGraph) -> Vec<(String, u64)> {
        let mut counts = vec![0u64; graph.vertices.len()];
        for s in &self.sunk {
            counts[s.vertex as usize] += 1;
        }
        graph
            .vertices
            .iter()
            .zip(counts)
            .filter(|(v, _)| v.chain.sink().is_some())
            .map(|(v, n)| (v.name.clone(), n))
            .collect()
    }

    /// End-of-run checks; returns every violation, incremental ones first.
    ///
    /// `exactly-once-output`: the sinks' records are compared with a reference evaluation of the
    /// job over the records the sources actually emitted. No record may be sunk twice or be
    /// unknown to the reference; when the job FINISHED, none may be missing either.
    /// `kept` tells whether TaskManager `tm` still holds `rpc` for a retry, or has it on its
    /// way to the JobMaster: an RPC refused and never applied is lost only if it is neither.
    pub fn finish(
        mut self,
        graph: &ExecutionGraph,
        status: JobStatus,
        now: Instant,
        last_event: u64,
        max_attempts: u32,
        kept: impl Fn(u32, Rpc) -> bool,
    ) -> Vec<Violation> {
        if let Some(v) = self
            .reconcile_outcome
            .as_mut()
            .and_then(|r| r.finish(graph, now, last_event))
        {
            self.violate(v);
        }
        if let Some(message) = self.reports.as_mut().and_then(|r| r.finish(graph)) {
            self.violate(Violation {
                invariant: Invariant::ReconcileOutcome,
                time: now,
                actors: vec!["TaskManager".to_owned()],
                event_index: last_event,
                message,
            });
        }
        if let Some(v) = self
            .checkpoint_failures
            .as_mut()
            .and_then(|c| c.finish(graph))
        {
            self.violate(v);
        }
        if let Some(v) = self.cancel_markers.as_mut().and_then(|c| c.finish(graph)) {
            self.violate(v);
        }
        if let Some(v) = self
            .restore_shape
            .as_ref()
            .and_then(|r| r.finish(now, last_event))
        {
            self.violate(v);
        }
        // Once the job ended, every checkpoint it triggered has an outcome.
        if let Some(&n) = self.open.iter().next().filter(|_| status.is_terminal()) {
            self.violate(Violation {
                invariant: Invariant::CheckpointProgress,
                time: now,
                actors: vec!["CheckpointCoordinator".to_owned()],
                event_index: last_event,
                message: format!(
                    "the job is {status}, yet checkpoint {n} (triggered at {}) never completed \
                     nor was aborted",
                    self.triggered_at.get(&n).copied().unwrap_or(Instant::ZERO)
                ),
            });
        }
        let subtasks = graph.subtasks.len() as u64;
        let global = self
            .checkpoint_failures
            .as_ref()
            .map_or(0, |c| c.global_failures());
        // F1.6: a job whose checkpoint must be refused fails before it runs.
        let refused = self.restore_shape.as_ref().is_some_and(|r| r.refused());
        if let Some(v) = job_status::judge(
            status,
            &self.fired,
            global,
            subtasks,
            max_attempts,
            now,
            last_event,
        )
        .filter(|_| !refused)
        {
            self.violate(v);
        }
        // P3.3: no refused RPC is lost.
        if let Some(&(tm, rpc, index, at)) = self.owed.iter().find(|o| !kept(o.0, o.1)) {
            self.violate(Violation {
                invariant: Invariant::NoLostRpc,
                time: at,
                actors: vec![format!("TaskManager{tm}"), "JobMaster".to_owned()],
                event_index: index,
                message: format!(
                    "TaskManager{tm}'s {:?} about {} attempt {} was refused at {at} and never reached the JobMaster, though the TaskManager lived on and the attempt was never replaced (P3.3)",
                    rpc.call,
                    graph.subtask_name(rpc.subtask),
                    rpc.attempt
                ),
            });
        }
        // The reference derives what each source must emit from the scenario (all of its
        // records once the job finished), not from what the sources did emit.
        let finished = status == JobStatus::Finished;
        // F1.6: a job submitted with a checkpoint starts from it.
        let restored = self.restored.as_ref();
        // F1.11: a job stopped by a savepoint ends with what its sources emitted up to the
        // stop; a keyed sum emits totals only if every source before it ended its input.
        // A source deployed finished on restore emitted all it ever did before.
        // F1.13: how far each split's records went, from the split ledger.
        let split_read = self.splits.as_ref().map(|s| s.read()).unwrap_or_default();
        let reference = |emitted: &[u64], output: &mut dyn FnMut(u32, Record)| {
            reference::each_expected(
                graph,
                emitted,
                &split_read,
                finished,
                restored,
                None,
                output,
            )
        };
        // Exactly once, and unless a savepoint stopped the job, output equal to the
        // reference's has nothing to name: their fingerprints tell, without the reference's
        // list, a sort or a walk (`output_order`).
        let stopped = self
            .savepoints
            .as_ref()
            .is_some_and(|s| s.stopped().is_some());
        let quick = !self.at_least_once && !stopped;
        let mut expected = Vec::new();
        let mut want = output_order::Fingerprint::default();
        let overrun = match quick {
            true => reference(&self.emitted, &mut |v, r| want.add(v, r)),
            false => reference(&self.emitted, &mut |v, r| expected.push((v, r))),
        };
        let mut sunk = std::mem::take(&mut self.sunk);
        let equal = quick
            && want == output_order::Fingerprint::of(sunk.iter().map(|s| (s.vertex, s.record)));
        if quick && !equal {
            reference(&self.emitted, &mut |v, r| expected.push((v, r)));
        }
        // F1.11: what a failure-free run up to the farthest any attempt got produces. An
        // at-least-once sink keeps what it received from an attempt a failover replaced, even
        // past where the stopped job's last attempts got.
        let mut ever: std::collections::BTreeSet<(u32, Record)> = Default::default();
        let drained_then_failed = self
            .savepoints
            .as_ref()
            .is_some_and(|s| s.drained_then_failed());
        if let Some(s) = self.savepoints.as_ref().and_then(|s| s.stopped()) {
            ever = expected.iter().copied().collect();
            let emitted: Vec<u64> = (s.emitted.iter().zip(&self.emitted))
                .map(|(&last, &ever)| if last == u64::MAX { ever } else { last })
                .collect();
            expected.clear();
            reference::each_expected(
                graph,
                &emitted,
                &split_read,
                finished,
                restored,
                Some(s.ended),
                &mut |v, r| expected.push((v, r)),
            );
        }
        for reference::Overrun {
            source,
            emitted,
            limit,
        } in overrun
        {
            self.violate(Violation {
                invariant: Invariant::ExactlyOnceOutput,
                time: now,
                actors: vec![graph.subtask_name(source).to_string()],
                event_index: last_event,
                message: format!(
                    "source {} emitted {emitted} records, but the scenario gives it {limit} (P0)",
                    graph.subtask_name(source)
                ),
            });
        }
        if !equal {
            // Unstable is enough: every entry has an event index of its own.
            output_order::sort_by_sink_record(
                &mut sunk,
                |s| (s.vertex, s.record),
                |a, b| {
                    (a.vertex, a.record, a.event_index).cmp(&(b.vertex, b.record, b.event_index))
                },
            );
            output_order::sort_by_sink_record(&mut expected, |&entry| entry, Ord::cmp);
        }
        let name = |v: u32| graph.vertices[v as usize].name.clone();
        // What output means at each sink: received (at least once) or committed (two-phase).
        let verb = |v: u32| match graph.vertices[v as usize].chain.sink() {
            Some(Delivery::TwoPhaseCommit) => "committed",
            Some(Delivery::AtLeastOnce) | None => "received",
        };
        let describe = |r: &Record| describe_record(graph, r);

        let mut problems: Vec<Violation> = Vec::new();
        if self.at_least_once {
            let sunk: Vec<(u32, Record, u64)> = sunk
                .iter()
                .map(|s| (s.vertex, s.record, s.event_index))
                .collect();
            let finished = status == JobStatus::Finished;
            for problem in at_least_once::judge(&expected, &sunk, self.failed_over, finished) {
                let (vertex, event_index, message) = match problem {
                    at_least_once::Problem::Lost { vertex, record } => (
                        vertex,
                        last_event,
                        format!("never {} {} although the job finished", verb(vertex), describe(&record)),
                    ),
                    at_least_once::Problem::Unexpected { vertex, record, event } => (
                        vertex,
                        event,
                        format!(
                            "{} {}, which a failure-free run does not produce (nor a replay: at least once, a replay only adds copies, F1.7)",
                            verb(vertex),
                            describe(&record)
                        ),
                    ),
                    at_least_once::Problem::Duplicate { vertex, record, event } => (
                        vertex,
                        event,
                        format!(
                            "{} {} more than once although nothing was replayed",
                            verb(vertex),
                            describe(&record)
                        ),
                    ),
                };
                problems.push(Violation {
                    invariant: Invariant::ExactlyOnceOutput,
                    time: now,
                    actors: vec![name(vertex)],
                    event_index,
                    message: format!("sink {} {message}", name(vertex)),
                });
            }
        }
        // Walk both sorted lists, matching copies one for one.
        let (mut i, mut j) = (0, 0);
        while !equal && !self.at_least_once && (i < sunk.len() || j < expected.len()) {
            let got = sunk.get(i).map(|s| (s.vertex, s.record));
            let want = expected.get(j).copied();
            if got.is_some() && got == want {
                i += 1;
                j += 1;
            } else if let Some((vertex, record)) = got.filter(|g| want.is_none_or(|w| *g < w)) {
                let duplicate =
                    i > 0 && (sunk[i - 1].vertex, sunk[i - 1].record) == (vertex, record);
                let at_least_once =
                    graph.vertices[vertex as usize].chain.sink() != Some(Delivery::TwoPhaseCommit);
                if duplicate && at_least_once && self.failed_over {
                    // At-least-once output may repeat what a failover replayed (P4).
                    i += 1;
                    continue;
                }
                if at_least_once && self.failed_over && ever.contains(&(vertex, record)) {
                    i += 1; // F1.11: received before a failover, past the stop's position
                    continue;
                }
                let total = !self.is_source[record.origin.index()];
                if at_least_once && self.failed_over && total && drained_then_failed {
                    i += 1; // F1.11 steps 5, 6: totals of a drain that failed (or was lost with the JobManager) and was rolled back
                    continue;
                }
                let what = if duplicate {
                    "more than once"
                } else {
                    "although a failure-free run does not produce it"
                };
                problems.push(Violation {
                    invariant: Invariant::ExactlyOnceOutput,
                    time: now,
                    actors: vec![name(vertex)],
                    event_index: sunk[i].event_index,
                    message: format!(
                        "sink {} {} {} {what}",
                        name(vertex),
                        verb(vertex),
                        describe(&record)
                    ),
                });
                i += 1;
            } else {
                let (vertex, record) = want.expect("one side is left");
                if status == JobStatus::Finished {
                    problems.push(Violation {
                        invariant: Invariant::ExactlyOnceOutput,
                        time: now,
                        actors: vec![name(vertex)],
                        event_index: last_event,
                        message: format!(
                            "sink {} never {} {} although the job finished",
                            name(vertex),
                            verb(vertex),
                            describe(&record)
                        ),
                    });
                }
                j += 1;
            }
        }
        problems.sort_by_key(|v| v.event_index);
        // One violation per sink vertex and kind is enough to act on; say how many in all.
        let total = problems.len();
        if let Some(first) = problems.into_iter().next() {
            let mut first = first;
            if total > 1 {
                first
                    .message
                    .push_str(&format!(" ({} output problems in all)", total));
            }
            self.violations.push(first);
        }
        self.violations.sort_by_key(|v| v.event_index);
        self.violations
    }
}

/// `src[0]#17 (key 3, value 18)`: which record, the way a person can find it in a trace.
pub fn describe_record(graph: &ExecutionGraph, record: &Record) -> String {
    let vertex = graph.vertex_of(record.origin);
    // F1.13: a split record is named by its vertex, split and offset.
    if vertex.splits.is_some() && vertex.first == record.origin.0 {
        return format!(
            "record {}#{} (split {} offset {}, key {}, value {})",
            graph.subtask_name(record.origin),
            record.seq,
            record.seq >> 32,
            record.seq & u64::from(u32::MAX),
            record.key,
            record.value
        );
    }
    format!(
        "record {}#{} (key {}, value {})",
        graph.subtask_name(record.origin),
        record.seq,
        record.key,
        record.value
    )
}

/// A subtask's display name for messages.
pub fn subtask(graph: &ExecutionGraph, id: SubtaskId) -> String {
    graph.subtask_name(id).to_string()
}

#[cfg(test)]
pub(crate) mod tests;
