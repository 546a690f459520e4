//! The narrator: the context it keeps between events (per task, per checkpoint, what the
//! run's recovery does) and the dispatch of each trace event to the sentence that tells it.

use super::*;

/// What the narrator remembers about one subtask between events.
#[derive(Default)]
pub(super) struct TaskContext {
    /// The checkpoint it learned of last and how (trigger or barrier on which channel).
    pub(super) seen: Option<(u64, Option<ChannelId>)>,
    /// The channel whose barrier it took last, to say which barrier started an alignment.
    pub(super) last_barrier_channel: Option<ChannelId>,
    /// Whether the previous event about this task was an EndOfPartition arriving on this
    /// channel (then a barrier insertion that follows is P1.3 step 3).
    pub(super) eop_just_arrived: Option<ChannelId>,
    pub(super) ended_input: bool,
    /// The aligned checkpoint it is aligning, between its first barrier and its snapshot.
    pub(super) aligning: Option<u64>,
    /// Per input channel of the current attempt, the newest checkpoint whose barrier it took.
    pub(super) barrier_taken: BTreeMap<ChannelId, u64>,
    /// The input channels whose EndOfPartition was enqueued, and those whose EndOfPartition the
    /// current attempt processed.
    pub(super) eop_enqueued: std::collections::BTreeSet<ChannelId>,
    pub(super) eop_processed: std::collections::BTreeSet<ChannelId>,
}

/// The narrator: scenario facts plus the context gathered so far.
pub(super) struct Narrator<'a> {
    pub(super) graph: &'a ExecutionGraph,
    pub(super) report: &'a RunReport,
    pub(super) protocol: Option<FinishProtocol>,
    pub(super) unaligned: bool,
    pub(super) flush_before_finish: bool,
    pub(super) tasks: Vec<TaskContext>,
    /// Acknowledgements received per checkpoint.
    pub(super) acks: BTreeMap<u64, usize>,
    /// Re-trigger RPCs so far per checkpoint (the cascade, P1.2 option1).
    pub(super) retriggers: BTreeMap<u64, u64>,
    /// `sent_at` of an `updateTaskExecutionState` folded into the next line.
    pub(super) reported_at: Option<Instant>,
    /// Batch subtasks running a speculative attempt beside the original (P2.8), until one of
    /// the two is cancelled.
    pub(super) speculated: std::collections::BTreeSet<SubtaskId>,
    /// Batch: the TaskManager each attempt was deployed on, which hosts its blocking partition
    /// until it is released (the trace's release event names only the attempt).
    pub(super) deployed_on: BTreeMap<(SubtaskId, u32), u32>,
    /// What a new JobManager does in this run, so the narration says the branch taken
    /// rather than every branch the rules allow.
    pub(super) recovery: Recovery,
    /// For each refused RPC (by trace event index), when the same RPC next reached a
    /// JobMaster, if ever: P3.3 says the TaskManager sends it again, and the narration tells
    /// whether this run did.
    pub(super) refused_again: BTreeMap<u64, Option<Instant>>,
    /// The index of the event being narrated.
    pub(super) index: u64,
}

/// For each `rpc_refused` event, when its RPC next arrived (accepted or refused again), found
/// by one backward pass over the trace.
pub(super) fn refused_fates(
    events: &[(u64, Instant, TraceEvent)],
) -> BTreeMap<u64, Option<Instant>> {
    let mut next: BTreeMap<String, Instant> = BTreeMap::new();
    let mut fates = BTreeMap::new();
    for (index, time, event) in events.iter().rev() {
        let key = match event {
            TraceEvent::Rpc { from, rpc, .. } | TraceEvent::RpcRefused { from, rpc } => {
                format!("{from:?} {:?} {} {:?}", rpc.subtask, rpc.attempt, rpc.call)
            }
            _ => continue,
        };
        if matches!(event, TraceEvent::RpcRefused { .. }) {
            fates.insert(*index, next.get(&key).copied());
        }
        next.insert(key, *time);
    }
    fates
}

/// How this run's job recovers from a JobManager crash.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Streaming, `failover: restart` (P1.8).
    StreamingRestart,
    /// Either mode, `failover: reconcile` (P3).
    Reconcile,
    /// Batch with FLIP-383 job recovery (P2.4).
    BatchFlip383,
    /// Batch without it: a restart from scratch (P2.6).
    BatchFullRestart,
}

impl Narrator<'_> {
    pub(super) fn name(&self, s: SubtaskId) -> String {
        self.graph.subtask_name(s).to_string()
    }

    pub(super) fn channel(&self, c: ChannelId) -> String {
        self.graph.channel_name(c).to_string()
    }

    pub(super) fn names(&self, subtasks: &[SubtaskId]) -> String {
        if subtasks.is_empty() {
            return "none".to_owned();
        }
        let names: Vec<String> = subtasks.iter().map(|&s| self.name(s)).collect();
        names.join(", ")
    }

    pub(super) fn is_source(&self, s: SubtaskId) -> bool {
        self.graph.vertex_of(s).chain.is_source()
    }

    pub(super) fn is_two_phase_sink(&self, s: SubtaskId) -> bool {
        self.graph.vertex_of(s).chain.sink() == Some(Delivery::TwoPhaseCommit)
    }

    pub(super) fn flink(&self) -> bool {
        self.protocol == Some(FinishProtocol::Flink)
    }

    pub(super) fn legacy(&self) -> bool {
        self.protocol == Some(FinishProtocol::Legacy)
    }

    /// The rule that makes a task wait after end of input, for its variant.
    pub(super) fn finish_wait_rule(&self, s: SubtaskId) -> (&'static str, &'static str) {
        match self.protocol {
            Some(FinishProtocol::Flink) => (
                "F1.5 step 1",
                "its operators finish and it broadcasts EndOfData; it keeps running until a final checkpoint completes and its consumers processed all records (step 3)",
            ),
            Some(FinishProtocol::Legacy) => (
                "P1.6 (legacy)",
                "it declines every pending checkpoint and finishes; from now on no checkpoint is triggered",
            ),
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) if self.is_two_phase_sink(s) => (
                "P1.7",
                "a two-phase-commit sink may not finish until a checkpoint covering its final state completes, so its last transaction gets committed",
            ),
            Some(FinishProtocol::Option2) => (
                "P1.6, P1.2 option2",
                "it waits for the checkpoints it takes part in, then reports 'finishing' before EndOfPartition",
            ),
            Some(FinishProtocol::Option1) => (
                "P1.6",
                "it waits for every pending checkpoint it takes part in, not cancelling them, then emits EndOfPartition",
            ),
            None => ("P0", "without checkpointing it emits EndOfPartition at once"),
        }
    }

    pub(super) fn event(&mut self, time: Instant, event: &TraceEvent) -> Told {
        if let TraceEvent::Deployed {
            subtask,
            attempt,
            task_manager,
            speculative,
        } = *event
        {
            self.deployed_on.insert((subtask, attempt), task_manager);
            if speculative {
                self.speculated.insert(subtask);
            }
        }
        match *event {
            batch @ (TraceEvent::VertexInitialized { .. }
                | TraceEvent::SplitAssigned { .. }
                | TraceEvent::PartitionWritten { .. }
                | TraceEvent::JobEventLogged { .. }
                | TraceEvent::JobEventsFlushed { .. }
                | TraceEvent::JobEventsLost { .. }
                | TraceEvent::JobEventsWriteFailed { .. }
                | TraceEvent::JobEventsUnreadable { .. }
                | TraceEvent::RecoveryStarted { .. }
                | TraceEvent::PartitionReported { .. }
                | TraceEvent::ReleaseRequested { .. }
                | TraceEvent::TaskRpcRefused { .. }
                | TraceEvent::PartitionReleased { .. }
                | TraceEvent::SubtaskReset { .. }
                | TraceEvent::RecoveryEnded { .. }
                | TraceEvent::PartitionNotFound { .. }
                | TraceEvent::TaskManagerDisconnected { .. }
                | TraceEvent::TaskManagerReconnected { .. }
                | TraceEvent::LeaderLost { .. }
                | TraceEvent::LeaderFound { .. }
                | TraceEvent::JobResultWritten
                | TraceEvent::SpeculationChecked
                | TraceEvent::OutputCommitted { .. }
                | TraceEvent::Deployed { .. }) => {
                let (mut actor, mut text) = crate::report::render::event_line(self.graph, &batch);
                if let TraceEvent::PartitionReleased {
                    subtask,
                    attempt,
                    remote: false,
                } = batch
                {
                    if let Some(tm) = self.deployed_on.get(&(subtask, attempt)) {
                        actor = format!("TaskManager{tm}");
                    }
                }
                // The narration cites the rule in front; drop the timeline's trailing citation.
                if let Some(cut) = text.rfind(" (P").or_else(|| text.rfind(" (F")) {
                    if text.ends_with(')') {
                        text.truncate(cut);
                    }
                }
                let rule = match batch {
                    TraceEvent::SubtaskReset { reason, .. } => reason.rule(),
                    TraceEvent::JobEventLogged { .. }
                    | TraceEvent::JobEventsFlushed { .. }
                    | TraceEvent::JobEventsLost { .. } => "P2.2",
                    TraceEvent::JobEventsWriteFailed { .. } => "F2.3",
                    TraceEvent::JobEventsUnreadable { .. } => "F2.4",
                    TraceEvent::RecoveryStarted { .. }
                    | TraceEvent::RecoveryEnded { .. }
                    | TraceEvent::PartitionReported { .. } => "P2.4",
                    TraceEvent::ReleaseRequested { .. }
                    | TraceEvent::PartitionReleased { .. } => "F2.4",
                    TraceEvent::TaskRpcRefused { .. } => "P3.3",
                    TraceEvent::LeaderLost { .. } => "F2.5",
                    TraceEvent::LeaderFound { .. } => "P2.3",
                    TraceEvent::JobResultWritten => "P2.7",
                    TraceEvent::SpeculationChecked => "P2.8",
                    // A streaming source's enumerator (F1.13); batch jobs' are P2.1's.
                    TraceEvent::SplitAssigned { subtask, .. }
                        if self.graph.vertex_of(subtask).splits.is_some() =>
                    {
                        "F1.13 step 1"
                    }
                    TraceEvent::Deployed {
                        speculative: true,
                        ..
                    } => "P2.8",
                    _ => "P2.1",
                };
                told(actor, rule, text)
            }
            TraceEvent::JobStatus { from, to } => self.job_status(from, to),
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                to,
                ..
            } => self.execution_state(time, subtask, attempt, to),
            TraceEvent::TaskState {
                subtask,
                attempt,
                to,
                ..
            } => self.task_state(subtask, attempt, to),
            TraceEvent::Rpc {
                from, to, rpc, ..
            } => self.rpc(from, to, rpc.subtask, rpc.attempt, rpc.call),
            TraceEvent::Push { channel, element } => self.push(channel, element),
            TraceEvent::Arrive { channel, element } => self.arrive(channel, element),
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } => self.take(subtask, channel, element),
            TraceEvent::BufferSent {
                channel, records, ..
            } => told(
                self.name(self.graph.channels[channel.index()].from),
                "F1.14",
                format!("sends a buffer of {records} records on {}", self.channel(channel)),
            ),
            TraceEvent::BufferArrived { channel, records } => {
                let to = self.graph.channels[channel.index()].to;
                self.tasks[to.index()].eop_just_arrived = None;
                told(
                    self.name(to),
                    "",
                    format!("a buffer of {records} records arrived on {}", self.channel(channel)),
                )
            }
            TraceEvent::BufferTaken {
                subtask,
                channel,
                records,
                ..
            } => {
                self.tasks[subtask.index()].eop_just_arrived = None;
                told(
                    self.name(subtask),
                    "F1.14 step 9",
                    format!("takes a buffer's {records} records from {} in one step", self.channel(channel)),
                )
            }
            TraceEvent::Blocked { subtask, channel } => told(
                self.name(subtask),
                "P0",
                format!("{} is full: waits for credit", self.channel(channel)),
            ),
            TraceEvent::EndOfInput { subtask } => {
                self.tasks[subtask.index()].ended_input = true;
                let why = if self.is_source(subtask) {
                    "its source ran out of records"
                } else if self.flink() {
                    "every input channel delivered EndOfData"
                } else {
                    "every input channel delivered EndOfPartition"
                };
                let (rule, next) = self.finish_wait_rule(subtask);
                told(
                    self.name(subtask),
                    rule,
                    format!("reached the end of its input ({why}): {next}"),
                )
            }
            TraceEvent::CheckpointTriggered { checkpoint } => self.triggered(checkpoint),
            TraceEvent::CheckpointNotTriggered { reason } => self.not_triggered(reason),
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                by_trigger,
            } => self.seen(subtask, checkpoint, by_trigger),
            TraceEvent::BarrierInserted {
                subtask,
                channel,
                checkpoint,
            } => self.inserted(subtask, channel, checkpoint),
            TraceEvent::AlignmentDone {
                subtask,
                checkpoint,
                alignment,
            } => {
                let how = if self.unaligned {
                    "every channel delivered its barrier or EndOfPartition, as aligned (the row 'trigger + EndOfPartition on every channel')"
                } else {
                    "every input channel delivered barrier or EndOfPartition (EndOfPartition counts as aligned); blocked channels are released"
                };
                let rule = if self.flink() { "P1.4, F1.3" } else { "P1.4" };
                // From the facts: a channel whose EndOfPartition was enqueued but neither it
                // nor a barrier of this checkpoint was taken still had records ahead of its
                // EndOfPartition; aligning without them departs from P1.3 step 2 (a barrier
                // goes right before that EndOfPartition, so those records stay in the cut).
                let task = &self.tasks[subtask.index()];
                let skipped: Vec<String> = task
                    .eop_enqueued
                    .iter()
                    .filter(|c| {
                        task.barrier_taken.get(c) != Some(&checkpoint)
                            && !task.eop_processed.contains(c)
                    })
                    .map(|&c| self.channel(c))
                    .collect();
                if !skipped.is_empty() {
                    return key(
                        self.name(subtask),
                        "P1.3 step 2",
                        format!(
                            "aligned checkpoint {checkpoint} after {alignment} and snapshots now, though {} had EndOfPartition enqueued with neither barrier {checkpoint} nor that EndOfPartition taken: the records still ahead of it are outside the cut, a departure from P1.3 step 2 (barrier {checkpoint} goes right before a buffered EndOfPartition)",
                            skipped.join(", ")
                        ),
                        "alignment complete",
                    );
                }
                let told = told(
                    self.name(subtask),
                    rule,
                    format!("aligned checkpoint {checkpoint} after {alignment}; it snapshots now{WHY}: {how}"),
                );
                // An alignment that took no time (one input, or every barrier at once) is
                // routine, not a moment to stop at.
                if alignment == sim::Duration::ZERO {
                    told
                } else {
                    (told.0, told.1, told.2, Some("alignment complete"))
                }
            }
            TraceEvent::SnapshotUploaded {
                subtask,
                checkpoint,
                ..
            } => key(
                self.name(subtask),
                "F1.8",
                format!(
                    "the asynchronous part of its snapshot for checkpoint {checkpoint} is over: the state is in durable storage, so only now does it acknowledge the checkpoint (its barrier went on at the synchronous part)"
                ),
                "snapshot uploaded",
            ),
            TraceEvent::BarriersCounted {
                subtask,
                checkpoint,
                waited,
                past_barrier,
            } => {
                let held = match past_barrier {
                    0 => "it took no record past a barrier meanwhile, so its snapshot, taken now, is exactly at the barriers".to_owned(),
                    n => format!("it went on taking records from channels whose barrier had come, {n} of them, so its snapshot, taken now, holds them and a restore from it replays them (at least once)"),
                };
                key(
                    self.name(subtask),
                    "F1.7",
                    format!(
                        "counted checkpoint {checkpoint}'s barrier on every channel open at its first one, {waited} after it (a channel that ended counts) without blocking any; {held}"
                    ),
                    "barriers counted",
                )
            }
            TraceEvent::Snapshot {
                subtask,
                checkpoint,
                finished,
                ..
            } => self.snapshot(subtask, checkpoint, finished),
            TraceEvent::Retrigger {
                checkpoint,
                finished,
                descendant,
            } => {
                let n = self.retriggers.entry(checkpoint).or_default();
                *n += 1;
                let cascade = if *n > 1 {
                    format!(" This is re-trigger RPC #{n} for checkpoint {checkpoint}: the cascade finish problem, one level further down.")
                } else {
                    String::new()
                };
                told(
                    CC,
                    "P1.2 option1",
                    format!(
                        "{} had finished when its trigger for checkpoint {checkpoint} arrived; its channels already carried EndOfPartition, so the coordinator asks the JobMaster to trigger its descendant {} by RPC instead, as every input of that one has finished and no barrier will reach it (P1.3).{cascade}",
                        self.name(finished),
                        self.name(descendant)
                    ),
                )
            }
            TraceEvent::CheckpointCompleted { checkpoint } => self.completed(checkpoint),
            TraceEvent::CheckpointAborted { checkpoint, reason } => self.aborted(checkpoint, reason),
            TraceEvent::CheckpointFailuresExceeded { checkpoint, failures } => key(
                CC,
                "F1.9",
                format!("checkpoint {checkpoint} makes {failures} counted checkpoint failures in a row (expired, or a failed asynchronous part), one more than tolerable_failures allows: the job fails over as a whole"),
                "failover",
            ),
            TraceEvent::ChainedSink { subtask, .. } => told(
                self.name(subtask),
                "F1.12",
                "its chained sink wrote out a record (the operators before it ran in the same task)".to_owned(),
            ),
            TraceEvent::Commit {
                subtask,
                checkpoint,
                ..
            } => told(
                self.name(subtask),
                "P1.7",
                format!("committed a record of the transaction of checkpoint {checkpoint}"),
            ),
            TraceEvent::TransactionCommitted {
                subtask,
                checkpoint,
                records,
                ..
            } => told(
                self.name(subtask),
                if self.tasks[subtask.index()].ended_input { "P1.7" } else { "P1.8, P4 exactly-once-output" },
                format!(
                    "committed the transaction pre-committed at checkpoint {checkpoint} ({records} records){WHY}: two-phase commit makes output visible only once a checkpoint covering it completed{}",
                    if self.tasks[subtask.index()].ended_input { "; this is its last transaction, so it may now finish" } else { "" }
                ),
            ),
            TraceEvent::AllRecordsProcessed { channel } => {
                let from = self.graph.channels[channel.index()].from;
                told(
                    self.name(from),
                    "F1.5 steps 1 and 3",
                    format!(
                        "the consumer of {} dequeued EndOfData and acknowledged all records processed{WHY}: one of the two conditions for {} to close",
                        self.channel(channel),
                        self.name(from)
                    ),
                )
            }
            TraceEvent::SavepointTriggered { checkpoint, drain } => key(
                CC,
                "F1.11 step 1",
                format!("checkpoint {checkpoint} is a synchronous savepoint: periodic checkpoints stop, the sources are told to stop ({}) and then snapshot, and every task waits for this savepoint's completion before it finishes", if drain { "with drain: their input ends, operators finish" } else { "without drain: operators do not finish, so the job can resume from it" }),
                "savepoint",
            ),
            TraceEvent::SavepointRefused { reason } => key(
                CC,
                "F1.11 step 1",
                match reason {
                    SavepointRefusal::JobNotRunning => "the stop-with-savepoint is refused: the job is not RUNNING, and nothing is triggered".to_owned(),
                    SavepointRefusal::SavepointInProgress => "the stop-with-savepoint is refused: another one is under way".to_owned(),
                },
                "refused",
            ),
            TraceEvent::SourceStopped { subtask, checkpoint, drain, .. } => told(
                self.name(subtask),
                "F1.11 step 2",
                if drain {
                    format!("stops for savepoint {checkpoint}, with drain: its input ends (EndOfData), then it snapshots and waits for the savepoint")
                } else {
                    format!("stops for savepoint {checkpoint}, without drain: EndOfData(no drain) tells its consumers to stop without finishing their operators; then it snapshots and waits for the savepoint")
                },
            ),
            TraceEvent::SavepointFailed { checkpoint } => key(
                CC,
                "F1.11 step 5",
                if checkpoint == 0 {
                    "the stop-with-savepoint failed before any savepoint was triggered: the checkpoint scheduler starts again and the job runs on".to_owned()
                } else {
                    format!("the stop-with-savepoint failed with savepoint {checkpoint}: the checkpoint scheduler starts again; every task that took the savepoint fails when told of the abort, and a failover restores the job")
                },
                "savepoint failed",
            ),
            TraceEvent::ChannelReleased { channel, arrivals } => key(
                "Faults",
                "",
                format!(
                    "channel {} is let go: the {arrivals} elements that waited on its wire reach {} now, in the order they were sent",
                    self.channel(channel),
                    self.name(self.graph.channels[channel.index()].to)
                ),
                "release",
            ),
            TraceEvent::FaultFired { index, fault } => {
                let what = match fault {
                    FaultEvent::FailTask(s) => format!("task {} fails", self.name(s)),
                    FaultEvent::LoseTaskManager(tm) => format!("TaskManager{tm} is lost with its tasks and data"),
                    FaultEvent::DisconnectTaskManager(tm) => format!("TaskManager{tm} loses its connection to the JobManager, keeping its partitions"),
                    FaultEvent::CrashJobMaster => "the JobManager crashes".to_owned(),
                    FaultEvent::DelaySpike => "network delays spike".to_owned(),
                    FaultEvent::RpcLoss => "RPCs start getting lost".to_owned(),
                    FaultEvent::JobEventsWriteFailure => "the job event store fails to write: this JobManager logs nothing more".to_owned(),
                    FaultEvent::JobEventsReadFailure => "the durable job events can no longer be read back".to_owned(),
                    FaultEvent::TriggerTask { subtask, checkpoint: 0 } => format!("the test harness would trigger {} by hand, but no checkpoint is pending: nothing is sent", self.name(subtask)),
                    FaultEvent::TriggerTask { subtask, checkpoint } => format!("the test harness sends the trigger RPC of checkpoint {checkpoint} straight to {}, as Flink's task-level tests do (F1.4)", self.name(subtask)),
                    FaultEvent::FailSnapshot { subtask, checkpoint, sync: true } => format!("{}'s operator throws in snapshotState for checkpoint {checkpoint}: the task fails (F1.9)", self.name(subtask)),
                    FaultEvent::FailSnapshot { subtask, checkpoint, sync: false } => format!("writing {}'s state for checkpoint {checkpoint} fails: the task declines the checkpoint and runs on (F1.9)", self.name(subtask)),
                    FaultEvent::StopWithSavepoint { drain: true } => "the operator asks the JobManager to stop the job with a savepoint, draining it (flink stop --drain, F1.11)".to_owned(),
                    FaultEvent::StopWithSavepoint { drain: false } => "the operator asks the JobManager to stop the job with a savepoint, without drain, so that it can resume from it (flink stop, F1.11)".to_owned(),
                    FaultEvent::HoldChannel(c) => format!("channel {} stalls: what is on its wire, and what its producer sends within its credit, waits there until the hold ends", self.channel(c)),
                };
                // The rule the fault puts to the test, and a label by its kind: only a process
                // that dies is a crash.
                let batch = self.report.batch.is_some();
                let (rule, label) = match fault {
                    FaultEvent::CrashJobMaster if batch => ("P2.3", "crash"),
                    FaultEvent::FailTask(_)
                    | FaultEvent::LoseTaskManager(_)
                    | FaultEvent::CrashJobMaster => ("P1.8", "crash"),
                    FaultEvent::DisconnectTaskManager(_) => ("P2.3", "fault"),
                    FaultEvent::DelaySpike | FaultEvent::RpcLoss => ("P3.3", "network fault"),
                    FaultEvent::HoldChannel(_) => ("P0", "network fault"),
                    FaultEvent::JobEventsWriteFailure | FaultEvent::JobEventsReadFailure => {
                        ("P2.2", "fault")
                    }
                    FaultEvent::TriggerTask { .. } => ("F1.4", "trigger by hand"),
                    FaultEvent::FailSnapshot { .. } => ("F1.9", "fault"),
                    FaultEvent::StopWithSavepoint { .. } => ("F1.11", "stop"),
                };
                key(
                    "Faults",
                    rule,
                    format!("fault {index} of the scenario fires: {what}"),
                    label,
                )
            }
            TraceEvent::Failover {
                cause,
                restarting,
                full,
            } => key(
                JM,
                "P1.8",
                format!(
                    "{} failed, so the JobMaster cancels {} ({restarting} subtasks) to restart it from the latest completed checkpoint; pending checkpoints that waited for them are aborted",
                    cause.map_or("a global failure (too many checkpoint failures in a row, F1.9)".to_owned(), |c| self.name(c)),
                    if full { "the whole job" } else { "its pipelined region" }
                ),
                "failover",
            ),
            TraceEvent::Restore {
                checkpoint,
                restarted,
                finished,
                ..
            } => {
                let text = if checkpoint == 0 {
                    format!("no checkpoint completed yet: {restarted} subtasks start from scratch and sources replay everything")
                } else {
                    format!(
                        "redeploys {restarted} subtasks from checkpoint {checkpoint}; {finished} of them were recorded finished there, so they are deployed finished on restore and run nothing again; sources rewind to their checkpointed offsets"
                    )
                };
                key(JM, "P1.8, F1.6", text, "restore")
            }
            TraceEvent::JobMasterLost { incarnation } if self.report.batch.is_some() => key(
                JM,
                "P2.3",
                format!(
                    "JobManager {incarnation} crashed: its view of the job and any job events not yet flushed are gone; the flushed events, the shuffle master's snapshot and the partitions the TaskManagers hold survive"
                ),
                "crash",
            ),
            TraceEvent::JobMasterLost { incarnation } => key(
                JM,
                "P1.8",
                format!(
                    "JobManager {incarnation} crashed: its volatile state (the coordinator's view of task status{}) is gone; only durable storage survives",
                    if self.protocol == Some(FinishProtocol::Option2) { ", the option2 finished set" } else { "" }
                ),
                "crash",
            ),
            TraceEvent::JobMasterElected { incarnation } => {
                let (rule, what) = match self.recovery {
                    Recovery::StreamingRestart => ("P1.8", "it reads the completed checkpoints from durable storage and restarts the job from the latest"),
                    Recovery::Reconcile => ("P3.1", "under `failover: reconcile` it keeps the tasks running, asks the TaskManagers what they run and rebuilds its view from their reports"),
                    Recovery::BatchFlip383 => ("P2.4", "it reads back the flushed job events and waits for the TaskManagers' partition reports, then recovers what finished (FLIP-383)"),
                    Recovery::BatchFullRestart => ("P2.6", "job recovery is off for this job, so it restarts the batch job from the beginning"),
                };
                key(
                    JM,
                    rule,
                    format!("JobManager {incarnation} is elected (HA): {what}"),
                    "recovery decision",
                )
            }
            TraceEvent::TaskManagerLost { task_manager } => key(
                format!("TaskManager{task_manager}"),
                "P1.8",
                "lost: its tasks and the data in their channels and partitions are gone".to_owned(),
                "crash",
            ),
            TraceEvent::TaskManagerStarted { task_manager } => told(
                format!("TaskManager{task_manager}"),
                "P0",
                "a replacement process started and registered its slots".to_owned(),
            ),
            TraceEvent::TaskManagerTimedOut { task_manager } => told(
                JM,
                "P0, P1.8",
                format!("the heartbeat of TaskManager{task_manager} timed out: the JobMaster fails the executions it hosted"),
            ),
            TraceEvent::RestartsExhausted { failovers } => key(
                JM,
                "P1.8",
                format!("the restart strategy allows no more restarts after {failovers} failovers: the job fails"),
                "recovery decision",
            ),
            TraceEvent::RestoreRejected { checkpoint } => key(
                JM,
                "F1.6",
                format!("refuses to restore checkpoint {checkpoint}: its finished subtasks form an impossible shape (e.g. a fully finished vertex behind one still running); the job fails"),
                "recovery decision",
            ),
            TraceEvent::ChannelState {
                subtask,
                checkpoint,
                channel,
                records,
                output,
            } => {
                let (rule, text) = if output {
                    (
                        if self.flush_before_finish { "P1.4, P1.5" } else { "P1.4" },
                        format!("its unaligned barrier {checkpoint} overtook {} still queued in its output {}: they become result-subpartition state of the checkpoint", records_text(records), self.channel(channel)),
                    )
                } else {
                    (
                        "P1.4",
                        format!("{} that arrived on {} before its barrier {checkpoint} (or EndOfPartition) become input channel state: they are in flight across the cut", records_text(records), self.channel(channel)),
                    )
                };
                told(self.name(subtask), rule, text)
            }
            TraceEvent::RpcLost { from, to, retry } => told(
                address(from),
                "P4 no-lost-rpc",
                format!("an RPC to {} was lost in the network; the sender retries after {retry}{WHY}, so nothing is lost for good", address(to)),
            ),
            TraceEvent::RpcRefused { from, rpc } => {
                let fate = match self.refused_again.get(&self.index).copied().flatten() {
                    Some(at) => format!("; it arrives again at {at}"),
                    None => "; in this run it never reaches a JobMaster again, against P3.3 unless its TaskManager died".to_owned(),
                };
                told(
                    address(from),
                    "P3.3",
                    format!(
                        "keeps an RPC about {}{fate}{WHY}: no JobMaster is elected, or the new one is reconciling and refuses everything but reports, so the TaskManager must send it again later for none to be lost",
                        self.name(rpc.subtask)
                    ),
                )
            }
            TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            } => key(
                JM,
                "P3.4",
                format!(
                    "reconciliation ends: {reported} executions reported, {missing} TaskManager(s) missing, so the job goes {}",
                    match outcome {
                        crate::trace::ReconcileOutcome::Running => "RUNNING: every TaskManager reported and no task failed",
                        crate::trace::ReconcileOutcome::Finished => "FINISHED: every task had finished",
                        crate::trace::ReconcileOutcome::Failing => "FAILING, then a normal failover",
                    }
                ),
                "reconciled",
            ),
            TraceEvent::RpcDropped { from, to, fenced, .. } => told(
                address(to),
                "P1.8",
                if fenced {
                    format!("refuses an RPC from {}: that JobMaster is no longer the leader (fencing, as Flink's JobMasterId)", address(from))
                } else {
                    format!("an RPC from {} reached a process that has died since: it is gone with it", address(from))
                },
            ),
        }
    }
}

/// The rule behind a decline and what it means.
pub(super) fn decline_rule(reason: DeclineReason) -> (&'static str, &'static str) {
    match reason {
        DeclineReason::Subsumed => ("F1.3", "a newer checkpoint's barrier arrived during its alignment (SUBSUMED)"),
        DeclineReason::TaskClosing => ("F1.5 step 4, F1.2", "the task has begun closing (TASK_CLOSING)"),
        DeclineReason::InputEndOfStream => (
            "P1.2 legacy, F1.3",
            "EndOfPartition arrived during alignment, which before FLIP-147 aborts it (INPUT_END_OF_STREAM)",
        ),
        DeclineReason::TaskFinishing => (
            "P1.6 (legacy)",
            "the task is finishing and, before FLIP-147, finishing cancels pending checkpoints",
        ),
        DeclineReason::TaskNotReady => ("F1.9", "the trigger reached the task before it was RUNNING (TASK_NOT_READY)"),
        DeclineReason::TaskFailure => ("F1.9", "the snapshot it took on the trigger failed, and the task with it (TASK_FAILURE)"),
        DeclineReason::OnCancellationBarrier => ("F1.10", "a cancellation marker of the checkpoint arrived on an input (ON_CANCELLATION_BARRIER)"),
        DeclineReason::AsyncException => ("F1.9", "writing its snapshot's state failed (CHECKPOINT_ASYNC_EXCEPTION), a failure tolerable_failures counts"),
    }
}

pub(super) fn address(a: crate::trace::Address) -> String {
    match a {
        crate::trace::Address::JobMaster => JM.to_owned(),
        crate::trace::Address::TaskManager(i) => format!("TaskManager{i}"),
    }
}

fn records_text(n: u32) -> String {
    if n == 1 {
        "1 record".to_owned()
    } else {
        format!("{n} records")
    }
}

pub(super) fn element_name(element: Element) -> String {
    match element {
        Element::Record(_) => "a record".to_owned(),
        Element::Barrier(n) => format!("barrier {n}"),
        Element::PriorityBarrier(n) => format!("unaligned barrier {n}"),
        Element::CancelMarker(n) => format!("cancel marker {n}"),
        Element::EndOfData(StopMode::Drain) => "EndOfData".to_owned(),
        Element::EndOfData(StopMode::NoDrain) => "EndOfData (no drain)".to_owned(),
        Element::EndOfPartition => "EndOfPartition".to_owned(),
    }
}
