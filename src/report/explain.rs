//! `flinksim explain`: a finished run narrated for a person learning the protocols.
//!
//! The timeline (`render::event_line`) says *what* happened; a narration also says *why*,
//! citing the rule of `docs/rules.md` (P… or F…) that made it happen, so
//! a reader can put the design document beside the output. The "why" is reconstructed from the
//! protocol-level trace alone (`Retain::Protocol`) plus the scenario and the run report (the
//! trigger plans): the narrator keeps the little context it needs (which checkpoint a task is
//! aligning, which of its channels hold EndOfPartition, how many acknowledgements the
//! coordinator still awaits) while walking the events in order. It never influences the run.
//!
//! Key moments (a plan computed, an alignment completed, a final checkpoint, a crash, a
//! failover, a restore, the job ending) are flagged so the renderer can set them apart and
//! `--step` can pause after them.

use crate::checkpoint::stats::Outcome;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::record::{Element, StopMode};
use crate::run::RunReport;
use crate::scenario::{CheckpointMode, Delivery, FinishProtocol, Scenario};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{
    AbortReason, Call, DeclineReason, FaultEvent, SavepointRefusal, TraceEvent, TriggerFailure,
};
use anstyle::{AnsiColor, Style};
use sim::Instant;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

/// One narrated event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narration {
    /// The index of the trace event narrated (as in `--trace` files).
    pub index: u64,
    pub time: Instant,
    /// Who acted, named as in the timeline.
    pub actor: String,
    /// The rule cited, e.g. `P1.3 step 2`; `None` for bookkeeping that no rule governs.
    pub rule: Option<String>,
    /// What happened and why.
    pub text: String,
    /// `Some(label)` for a key moment (`plan computed`, `crash`, …).
    pub key: Option<&'static str>,
    /// Where in `text` the explanation of a routine step begins (`text[..why]` says what
    /// happened, the rest why). A reader needs the reason once: [`Repeats`] lets the writer
    /// give it the first time and only the fact afterwards.
    pub why: Option<usize>,
}

/// Marks, inside a narration's text as the narrator writes it, where the explanation begins.
const WHY: char = '\u{1f}';

/// Takes the [`WHY`] marker out of `text`, returning the text and the marker's position.
fn split_why(text: String) -> (String, Option<usize>) {
    match text.find(WHY) {
        Some(at) => {
            let mut text = text;
            text.remove(at);
            (text, Some(at))
        }
        None => (text, None),
    }
}

/// The explanations already given in full, so that a repeated one is told in short. Two
/// explanations are the same when they cite the same rule and read the same once numbers are
/// left out (checkpoint ids, subtask indexes, durations): "everything it sent before belongs
/// to checkpoint 3" repeats "… to checkpoint 1", while "a source is always triggered by RPC"
/// and "none of its producers was running" are two different reasons.
#[derive(Default)]
pub struct Repeats {
    given: std::collections::BTreeSet<(Option<String>, String)>,
}

impl Repeats {
    /// Whether `n`'s explanation was given before (and records it as given now).
    pub fn told_before(&mut self, n: &Narration) -> bool {
        let Some(at) = n.why else { return false };
        let shape: String = n.text[at..]
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        !self.given.insert((n.rule.clone(), shape))
    }
}

/// What the narrator remembers about one subtask between events.
#[derive(Default)]
struct TaskContext {
    /// The checkpoint it learned of last and how (trigger or barrier on which channel).
    seen: Option<(u64, Option<ChannelId>)>,
    /// The channel whose barrier it took last, to say which barrier started an alignment.
    last_barrier_channel: Option<ChannelId>,
    /// Whether the previous event about this task was an EndOfPartition arriving on this
    /// channel (then a barrier insertion that follows is P1.3 step 3).
    eop_just_arrived: Option<ChannelId>,
    ended_input: bool,
    /// The aligned checkpoint it is aligning, between its first barrier and its snapshot.
    aligning: Option<u64>,
    /// Per input channel of the current attempt, the newest checkpoint whose barrier it took.
    barrier_taken: BTreeMap<ChannelId, u64>,
    /// The input channels whose EndOfPartition was enqueued, and those whose EndOfPartition the
    /// current attempt processed.
    eop_enqueued: std::collections::BTreeSet<ChannelId>,
    eop_processed: std::collections::BTreeSet<ChannelId>,
}

/// The narrator: scenario facts plus the context gathered so far.
struct Narrator<'a> {
    graph: &'a ExecutionGraph,
    report: &'a RunReport,
    protocol: Option<FinishProtocol>,
    unaligned: bool,
    flush_before_finish: bool,
    tasks: Vec<TaskContext>,
    /// Acknowledgements received per checkpoint.
    acks: BTreeMap<u64, usize>,
    /// Re-trigger RPCs so far per checkpoint (the cascade, P1.2 option1).
    retriggers: BTreeMap<u64, u64>,
    /// `sent_at` of an `updateTaskExecutionState` folded into the next line.
    reported_at: Option<Instant>,
    /// Batch subtasks running a speculative attempt beside the original (P2.8), until one of
    /// the two is cancelled.
    speculated: std::collections::BTreeSet<SubtaskId>,
    /// What a new JobManager does in this run, so the narration says the branch taken
    /// rather than every branch the rules allow.
    recovery: Recovery,
    /// For each refused RPC (by trace event index), when the same RPC next reached a
    /// JobMaster, if ever: P3.3 says the TaskManager sends it again, and the narration tells
    /// whether this run did.
    refused_again: BTreeMap<u64, Option<Instant>>,
    /// The index of the event being narrated.
    index: u64,
}

/// For each `rpc_refused` event, when its RPC next arrived (accepted or refused again), found
/// by one backward pass over the trace.
fn refused_fates(events: &[(u64, Instant, TraceEvent)]) -> BTreeMap<u64, Option<Instant>> {
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
enum Recovery {
    /// Streaming, `failover: restart` (P1.8).
    StreamingRestart,
    /// Either mode, `failover: reconcile` (P3).
    Reconcile,
    /// Batch with FLIP-383 job recovery (P2.4).
    BatchFlip383,
    /// Batch without it: a restart from scratch (P2.6).
    BatchFullRestart,
}

/// Narrates every protocol-level event of `report` (run with at least `Retain::Protocol`).
pub fn narrate(scenario: &Scenario, report: &RunReport) -> Vec<Narration> {
    let checkpointing = scenario.checkpointing.as_ref();
    let mut narrator = Narrator {
        graph: &report.graph,
        report,
        protocol: checkpointing.map(|c| c.finish_protocol),
        unaligned: checkpointing.is_some_and(|c| c.mode == CheckpointMode::Unaligned),
        flush_before_finish: checkpointing.is_some_and(|c| c.flush_before_finish),
        tasks: (0..report.graph.subtasks.len())
            .map(|_| TaskContext::default())
            .collect(),
        acks: BTreeMap::new(),
        retriggers: BTreeMap::new(),
        reported_at: None,
        speculated: std::collections::BTreeSet::new(),
        recovery: match (&scenario.batch, scenario.jobmaster.failover) {
            (_, crate::scenario::Failover::Reconcile) => Recovery::Reconcile,
            (None, crate::scenario::Failover::Restart) => Recovery::StreamingRestart,
            (Some(b), _) if b.recovery_enabled() => Recovery::BatchFlip383,
            (Some(_), _) => Recovery::BatchFullRestart,
        },
        refused_again: refused_fates(report.trace.kept()),
        index: 0,
    };
    let events = report.trace.kept();
    let mut out = Vec::with_capacity(events.len());
    for (i, (index, time, event)) in events.iter().enumerate() {
        if event.is_data() {
            continue;
        }
        // An `updateTaskExecutionState` RPC is told together with the JobMaster's view change
        // it causes, on one line.
        if let TraceEvent::Rpc { sent_at, rpc, .. } = event {
            if let Call::UpdateTaskExecutionState(state) = rpc.call {
                if let Some((_, _, TraceEvent::ExecutionState { subtask, to, .. })) =
                    events.get(i + 1)
                {
                    if *subtask == rpc.subtask && *to == state {
                        narrator.reported_at = Some(*sent_at);
                        continue;
                    }
                }
            }
        }
        narrator.index = *index;
        let (actor, rule, text, key) = narrator.event(*time, event);
        let (text, why) = split_why(text);
        out.push(Narration {
            index: *index,
            time: *time,
            actor,
            rule,
            text,
            key,
            why,
        });
    }
    out
}

type Told = (String, Option<String>, String, Option<&'static str>);

fn told(actor: impl Into<String>, rule: &str, text: String) -> Told {
    let rule = (!rule.is_empty()).then(|| rule.to_owned());
    (actor.into(), rule, text, None)
}

fn key(actor: impl Into<String>, rule: &str, text: String, label: &'static str) -> Told {
    let mut t = told(actor, rule, text);
    t.3 = Some(label);
    t
}

const CC: &str = "Checkpointing";
const JM: &str = "JobMaster";

impl Narrator<'_> {
    fn name(&self, s: SubtaskId) -> String {
        self.graph.subtask_name(s).to_string()
    }

    fn channel(&self, c: ChannelId) -> String {
        self.graph.channel_name(c).to_string()
    }

    fn names(&self, subtasks: &[SubtaskId]) -> String {
        if subtasks.is_empty() {
            return "none".to_owned();
        }
        let names: Vec<String> = subtasks.iter().map(|&s| self.name(s)).collect();
        names.join(", ")
    }

    fn is_source(&self, s: SubtaskId) -> bool {
        self.graph.vertex_of(s).chain.is_source()
    }

    fn is_two_phase_sink(&self, s: SubtaskId) -> bool {
        self.graph.vertex_of(s).chain.sink() == Some(Delivery::TwoPhaseCommit)
    }

    fn flink(&self) -> bool {
        self.protocol == Some(FinishProtocol::Flink)
    }

    fn legacy(&self) -> bool {
        self.protocol == Some(FinishProtocol::Legacy)
    }

    /// The rule that makes a task wait after end of input, for its variant.
    fn finish_wait_rule(&self, s: SubtaskId) -> (&'static str, &'static str) {
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

    fn event(&mut self, time: Instant, event: &TraceEvent) -> Told {
        if let TraceEvent::Deployed {
            subtask,
            speculative: true,
            ..
        } = *event
        {
            self.speculated.insert(subtask);
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
                | TraceEvent::OutputCommitted { .. }
                | TraceEvent::Deployed { .. }) => {
                let (actor, mut text) = crate::report::render::event_line(self.graph, &batch);
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

    fn job_status(&self, from: JobStatus, to: JobStatus) -> Told {
        let text = format!("job {from} → {to}");
        match to {
            JobStatus::Finished => key(
                JM,
                "P0",
                format!("{text}: every subtask reached FINISHED"),
                "job finished",
            ),
            JobStatus::Failed => key(
                JM,
                "P1.8",
                format!("{text}: the job cannot recover"),
                "job failed",
            ),
            JobStatus::Restarting => told(
                JM,
                "P1.8",
                format!("{text}: the failed tasks are cancelled before restarting"),
            ),
            JobStatus::Failing => told(JM, "P1.8", format!("{text}: a task failed")),
            _ => told(JM, "", text),
        }
    }

    fn execution_state(
        &mut self,
        time: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) -> Told {
        let lag = match self.reported_at.take() {
            Some(sent) => format!(
                " (reported by its TaskManager at {sent}, {} ago)",
                time.saturating_duration_since(sent)
            ),
            None => String::new(),
        };
        let base = format!(
            "now sees {} attempt {attempt} {to}{lag}",
            self.name(subtask)
        );
        if self.report.batch.is_some() {
            // A batch job: a failure fails over (P2.4 step 4's expansion); a cancel ends a
            // reset attempt, or the loser of a speculated pair (P2.8).
            let rule = match to {
                ExecutionState::Canceled if self.speculated.remove(&subtask) => "P2.8",
                ExecutionState::Failed | ExecutionState::Canceled => "P2.4",
                _ => "",
            };
            return told(JM, rule, base);
        }
        if self.protocol.is_none() {
            // Without checkpointing no plan is involved.
            let rule = match to {
                ExecutionState::Failed | ExecutionState::Canceled => "P1.8",
                _ => "",
            };
            return told(JM, rule, base);
        }
        match to {
            ExecutionState::Finished => told(
                JM,
                "P1.1",
                format!("{base}{WHY}: from the next plan on the coordinator counts it finished; until now its view lagged the task"),
            ),
            ExecutionState::Running => told(
                JM,
                "F1.1",
                format!("{base}{WHY}: it can be part of a checkpoint plan (every subtask in a plan must be RUNNING)"),
            ),
            ExecutionState::Failed | ExecutionState::Canceled => told(JM, "P1.8", base),
            _ => told(JM, "", base),
        }
    }

    fn task_state(&mut self, subtask: SubtaskId, attempt: u32, to: ExecutionState) -> Told {
        // A new attempt, or a terminal one, aligns nothing.
        let task = &mut self.tasks[subtask.index()];
        task.aligning = None;
        if to == ExecutionState::Deploying {
            task.barrier_taken.clear();
            task.eop_enqueued.clear();
            task.eop_processed.clear();
        }
        let name = self.name(subtask);
        let base = format!("attempt {attempt} is {to}");
        if to != ExecutionState::Finished {
            let rule = match to {
                ExecutionState::Failed | ExecutionState::Canceled => "P1.8",
                _ => "",
            };
            return told(name, rule, base);
        }
        let (rule, why) = match self.protocol {
            Some(FinishProtocol::Flink) => (
                "F1.5 step 4",
                "its final checkpoint completed and its consumers processed all records, so it closed and enqueued EndOfPartition",
            ),
            Some(FinishProtocol::Option2) => (
                "P1.2 option2",
                "it reported 'finishing', performed the pending checkpoints it was told of, and emitted EndOfPartition",
            ),
            Some(FinishProtocol::Option1) => (
                "P1.6, P1.2 option1",
                "no checkpoint it took part in is pending any more. The JobMaster learns of it only by RPC, so a trigger may still race it",
            ),
            Some(FinishProtocol::Legacy) => (
                "P1.2 legacy",
                "from now on the coordinator triggers no checkpoint (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            None => ("P0", "its result partition ended"),
        };
        told(name, rule, format!("{base}: {why}"))
    }

    fn rpc(
        &mut self,
        from: crate::trace::Address,
        to: crate::trace::Address,
        subtask: SubtaskId,
        attempt: u32,
        call: Call,
    ) -> Told {
        let name = self.name(subtask);
        let dest = address(to);
        match call {
            Call::SubmitTask(restore) => {
                let (rule, how) = match (restore.checkpoint, restore.finished) {
                    (0, false) => ("", "a fresh start".to_owned()),
                    (0, true) => ("F1.6", "finished on restore".to_owned()),
                    (c, false) => ("P1.8", format!("restoring its state from checkpoint {c}")),
                    (c, true) => (
                        "F1.6",
                        format!("finished on restore: checkpoint {c} recorded it finished, so it runs no operator and processes no record"),
                    ),
                };
                told(dest, rule, format!("deploys {name} attempt {attempt}: {how}"))
            }
            Call::UpdateTaskExecutionState(state) => told(
                dest,
                "",
                format!("receives {name} attempt {attempt} is {state} from {}", address(from)),
            ),
            Call::TriggerCheckpoint(n) => {
                let why = if self.is_source(subtask) {
                    "a source is always triggered by RPC".to_owned()
                } else {
                    "none of its producers was running in the coordinator's view".to_owned()
                };
                told(
                    dest,
                    if self.flink() && !self.is_source(subtask) { "P1.1, F1.4" } else { "P1.1" },
                    format!("delivers the trigger for checkpoint {n} to {name}{WHY} ({why})"),
                )
            }
            Call::NotifyCheckpointComplete(n) => {
                let commit = if self.is_two_phase_sink(subtask) {
                    "\u{1f}: a two-phase-commit sink commits the transaction it pre-committed"
                } else {
                    ""
                };
                told(
                    dest,
                    if commit.is_empty() { "" } else { "P1.7" },
                    format!("tells {name} that checkpoint {n} completed{commit}"),
                )
            }
            Call::NotifyCheckpointAborted(n) => told(
                dest,
                "",
                format!("tells {name} that checkpoint {n} was aborted{WHY}: it drops what it prepared for it"),
            ),
            Call::AcknowledgeCheckpoint {
                checkpoint,
                finished,
            } => {
                let acks = {
                    let acks = self.acks.entry(checkpoint).or_default();
                    *acks += 1;
                    *acks
                };
                let awaited = self
                    .report
                    .checkpoints
                    .get((checkpoint as usize).wrapping_sub(1))
                    .map_or(0, |c| c.plan.to_wait_for.len());
                let final_note = if finished {
                    if self.flink() {
                        " It is flagged 'task finished' (F1.5 step 2)."
                    } else {
                        " Taken after its end of input."
                    }
                } else {
                    ""
                };
                told(
                    CC,
                    "P1.1",
                    format!(
                        "{name} acknowledged checkpoint {checkpoint}: {acks} of {awaited} awaited subtasks so far.{final_note}"
                    ),
                )
            }
            Call::DeclineCheckpoint { checkpoint, reason } => {
                let (rule, why) = decline_rule(reason);
                told(CC, rule, format!("{name} declines checkpoint {checkpoint}: {why}"))
            }
            Call::TriggerSavepoint { checkpoint, drain } => told(
                dest,
                "F1.11 step 2",
                format!("delivers the trigger of savepoint {checkpoint} to {name}: it stops ({}), then snapshots", if drain { "drain" } else { "no drain" }),
            ),
            Call::TriggerFailed(n) => told(
                CC,
                "F1.9",
                format!("the TaskManager answers the trigger of checkpoint {n} for {name}: it no longer hosts that attempt (unknown task), so the checkpoint fails, without counting against tolerable_failures"),
            ),
            Call::TriggerMissed(n) => {
                let (rule, next) = match self.protocol {
                    Some(FinishProtocol::Option1) => (
                        "P1.2 option1",
                        "the coordinator records its empty state and re-triggers each descendant whose inputs have all finished",
                    ),
                    Some(FinishProtocol::Flink) => ("F1.2", "Flink aborts the whole checkpoint; the next one plans again"),
                    Some(FinishProtocol::Legacy) => ("P1.2 legacy", "the checkpoint fails"),
                    Some(FinishProtocol::Option2) | None => ("P1.2", "it is ignored"),
                };
                told(
                    CC,
                    rule,
                    format!("the trigger for checkpoint {n} reached {name} after it had finished (the coordinator's view lagged): {next}"),
                )
            }
            Call::Finishing => told(
                CC,
                "P1.2 option2",
                format!("{name} reports 'finishing' before emitting EndOfPartition; the coordinator marks it finished at once, so no later trigger can miss it"),
            ),
            Call::FinishingAnswer(set) => {
                let ids: Vec<String> = set.iter().map(|n| n.to_string()).collect();
                let text = if ids.is_empty() {
                    format!("answers {name}: no pending checkpoint it has not taken part in, so it emits EndOfPartition")
                } else {
                    format!(
                        "answers {name} with the pending checkpoints [{}]: it performs each (an empty snapshot, its input ended) and broadcasts their barriers before EndOfPartition",
                        ids.join(", ")
                    )
                };
                told(dest, "P1.2 option2", text)
            }
            Call::CancelTask => told(dest, "P1.8", format!("cancels {name} attempt {attempt} for the failover")),
            Call::ReportExecution(state) => told(
                dest,
                "P3.2",
                format!("learns from {} that it hosts {name} attempt {attempt}, {state}", address(from)),
            ),
            Call::ReportDone => told(dest, "P3.2", format!("has the whole report of {}", address(from))),
            Call::RequestSplit => told(dest, "F1.13 step 1", format!("hears that {name} attempt {attempt} holds no split and asks for one")),
            Call::AssignSplit(Some(split)) => told(dest, "F1.13 step 1", format!("delivers split {split} from the enumerator to {name} attempt {attempt}, which reads it next")),
            Call::AssignSplit(None) => told(dest, "F1.13 step 1", format!("delivers the enumerator's answer to {name} attempt {attempt}: no split is left, so it ends its input after its splits")),
        }
    }

    fn push(&self, channel: ChannelId, element: Element) -> Told {
        let from = self.graph.channels[channel.index()].from;
        let ch = self.channel(channel);
        match element {
            Element::Barrier(n) => told(
                self.name(from),
                "P1.4",
                format!("forwards barrier {n} on {ch}{WHY}: everything it sent before belongs to checkpoint {n}"),
            ),
            Element::PriorityBarrier(n) => told(
                self.name(from),
                "P1.4",
                format!("sends unaligned barrier {n} on {ch}: it overtakes the buffers queued ahead of it"),
            ),
            Element::CancelMarker(n) => told(
                self.name(from),
                "F1.10",
                format!("sends a cancellation marker for checkpoint {n} on {ch}: it abandoned the checkpoint, and its consumer is to abort it too"),
            ),
            Element::EndOfData(StopMode::NoDrain) => told(
                self.name(from),
                "F1.11 step 2",
                format!("sends EndOfData without drain on {ch}: it stopped for a savepoint; its consumer stops too, and finishes no operator"),
            ),
            Element::EndOfData(StopMode::Drain) => told(
                self.name(from),
                "F1.5 step 1",
                format!("sends EndOfData on {ch}{WHY}: no more records, but barriers and EndOfPartition may still follow"),
            ),
            Element::EndOfPartition => told(
                self.name(from),
                "P0",
                format!("sends EndOfPartition on {ch}{WHY}: its result partition ends, nothing follows"),
            ),
            Element::Record(_) => told(self.name(from), "", format!("sends a record on {ch}")),
        }
    }

    fn arrive(&mut self, channel: ChannelId, element: Element) -> Told {
        let to = self.graph.channels[channel.index()].to;
        let ch = self.channel(channel);
        let text = match element {
            Element::EndOfPartition => {
                self.tasks[to.index()].eop_just_arrived = Some(channel);
                self.tasks[to.index()].eop_enqueued.insert(channel);
                return match self.protocol {
                    Some(FinishProtocol::Option1 | FinishProtocol::Option2) => told(
                        self.name(to),
                        "P1.3 step 1",
                        format!("EndOfPartition is enqueued on {ch}: the channel posts a priority notice to the barrier handler, so barriers can be inserted before it"),
                    ),
                    _ => told(self.name(to), "", format!("EndOfPartition arrived on {ch}")),
                };
            }
            other => format!("{} arrived on {ch}", element_name(other)),
        };
        self.tasks[to.index()].eop_just_arrived = None;
        told(self.name(to), "", text)
    }

    fn take(&mut self, subtask: SubtaskId, channel: ChannelId, element: Element) -> Told {
        let ch = self.channel(channel);
        let name = self.name(subtask);
        self.tasks[subtask.index()].eop_just_arrived = None;
        match element {
            Element::Barrier(n) | Element::PriorityBarrier(n) => {
                self.tasks[subtask.index()].barrier_taken.insert(channel, n);
            }
            Element::EndOfPartition => {
                self.tasks[subtask.index()].eop_processed.insert(channel);
            }
            _ => {}
        }
        match element {
            Element::Barrier(n) => {
                self.tasks[subtask.index()].last_barrier_channel = Some(channel);
                told(
                    name,
                    "P1.4",
                    format!("processes barrier {n} from {ch}{WHY}; aligned mode blocks that channel until checkpoint {n} is aligned"),
                )
            }
            Element::PriorityBarrier(n) => {
                self.tasks[subtask.index()].last_barrier_channel = Some(channel);
                told(
                    name,
                    "P1.4",
                    format!("takes unaligned barrier {n} from {ch}: that channel's spilling to channel state ends"),
                )
            }
            Element::CancelMarker(n) => told(
                name,
                "F1.10",
                format!("takes a cancellation marker for checkpoint {n} from {ch}: if checkpoint {n} is still open here, the task aborts it, unblocks its channels, declines and passes the marker on"),
            ),
            Element::EndOfPartition => {
                let (rule, text) = match self.protocol {
                    Some(FinishProtocol::Option1 | FinishProtocol::Option2) => (
                        "P1.3 step 4",
                        format!("processed EndOfPartition from {ch}: the handler stops watching it, and every pending checkpoint needs one barrier fewer"),
                    ),
                    Some(FinishProtocol::Flink) => (
                        "F1.3",
                        format!("processed EndOfPartition from {ch}{WHY}: it is marked aligned for the pending checkpoint and excluded from later ones"),
                    ),
                    Some(FinishProtocol::Legacy) => match self.tasks[subtask.index()].aligning.take() {
                        Some(n) => (
                            "P1.2 legacy, F1.3",
                            format!("processed EndOfPartition from {ch} while aligning checkpoint {n}: before FLIP-147 that aborts the alignment, and the task declines (INPUT_END_OF_STREAM)"),
                        ),
                        None => ("P0", format!("processed EndOfPartition from {ch}: no more input on that channel")),
                    },
                    None => ("P0", format!("processed EndOfPartition from {ch}")),
                };
                told(name, rule, text)
            }
            Element::EndOfData(_) => told(
                name,
                "F1.5 step 1",
                format!("dequeued EndOfData from {ch}{WHY}: it acknowledges 'all records processed' to the producer"),
            ),
            Element::Record(_) => told(name, "", format!("took a record from {ch}")),
        }
    }

    fn triggered(&self, checkpoint: u64) -> Told {
        let Some(record) = self
            .report
            .checkpoints
            .get((checkpoint as usize).wrapping_sub(1))
            .filter(|r| r.id == checkpoint)
        else {
            return key(
                CC,
                "P1.1",
                format!("triggers checkpoint {checkpoint}"),
                "plan computed",
            );
        };
        let plan = &record.plan;
        let fully: Vec<&str> = plan
            .fully_finished
            .iter()
            .map(|v| self.graph.vertices[v.index()].name.as_str())
            .collect();
        let mut text = format!(
            "plans checkpoint {checkpoint} from its own view of task status: trigger by RPC [{}]; wait for {} subtasks; finished [{}]",
            self.names(&plan.to_trigger),
            plan.to_wait_for.len(),
            self.names(&plan.finished),
        );
        if !fully.is_empty() {
            text.push_str(&format!("; fully finished vertices [{}]", fully.join(", ")));
        }
        if plan.finished.is_empty() {
            text.push_str(". Nothing finished yet: only the sources are triggered; the rest learn of it from barriers");
        } else {
            text.push_str(". A finished subtask contributes a finished marker, not state; a running subtask none of whose producers runs is triggered by RPC");
        }
        key(CC, "P1.1", text, "plan computed")
    }

    fn not_triggered(&self, reason: TriggerFailure) -> Told {
        let (rule, why) = match reason {
            TriggerFailure::NotAllRequiredTasksRunning if self.legacy() => (
                "P1.2 legacy",
                "some subtask finished, and before FLIP-147 that stops all checkpoints (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            TriggerFailure::NotAllRequiredTasksRunning => (
                "F1.1",
                "some subtask of the plan is not RUNNING in the coordinator's view (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            TriggerFailure::TooManyConcurrent => ("P1.1", "max_concurrent checkpoints are already pending"),
            TriggerFailure::MinPause => ("P1.1", "min_pause has not passed since the last completion"),
            TriggerFailure::NothingRunning => ("P1.1", "nothing is left running"),
        };
        told(CC, rule, format!("does not trigger a checkpoint: {why}"))
    }

    fn seen(&mut self, subtask: SubtaskId, checkpoint: u64, by_trigger: bool) -> Told {
        let name = self.name(subtask);
        let task = &mut self.tasks[subtask.index()];
        task.eop_just_arrived = None;
        if by_trigger {
            task.seen = Some((checkpoint, None));
            let (rule, text) = if self.graph.subtasks[subtask.index()].inputs.is_empty() {
                ("P1.1", format!("learned of checkpoint {checkpoint} by the trigger RPC{WHY}: as a source it snapshots at once and sends barrier {checkpoint} downstream"))
            } else if self.flink() {
                ("F1.4", format!("learned of checkpoint {checkpoint} by the trigger RPC: a non-source snapshots at once if every input delivered EndOfPartition, otherwise it injects barriers into the open channels"))
            } else {
                ("P1.3", format!("learned of checkpoint {checkpoint} by the trigger RPC (all its producers finished): barriers go before every buffered EndOfPartition; if none is left (step 5) it snapshots at once"))
            };
            return told(name, rule, text);
        }
        let via = task.last_barrier_channel;
        task.seen = Some((checkpoint, via));
        task.aligning = (!self.unaligned).then_some(checkpoint);
        let from = via.map_or(String::new(), |c| format!(" on {}", self.channel(c)));
        let text = if self.unaligned {
            format!("learned of checkpoint {checkpoint} from its first barrier{from}: unaligned, it snapshots at once and spills what its other channels hold before their barriers")
        } else {
            format!("learned of checkpoint {checkpoint} from its first barrier{from}: alignment starts{WHY}; it waits for barrier {checkpoint} or EndOfPartition on every other channel")
        };
        told(name, "P1.3, P1.4", text)
    }

    fn inserted(&mut self, subtask: SubtaskId, channel: ChannelId, checkpoint: u64) -> Told {
        let name = self.name(subtask);
        let ch = self.channel(channel);
        let task = &self.tasks[subtask.index()];
        if task.eop_just_arrived == Some(channel) {
            return told(
                name,
                "P1.3 step 3",
                format!("EndOfPartition was just enqueued on {ch} while checkpoint {checkpoint} is pending, so barrier {checkpoint} is inserted right before it"),
            );
        }
        let how = match task.seen {
            Some((n, None)) if n == checkpoint => " by the trigger RPC".to_owned(),
            Some((n, Some(c))) if n == checkpoint => {
                format!(" by the barrier on {}", self.channel(c))
            }
            _ => String::new(),
        };
        told(
            name.clone(),
            "P1.3 step 2",
            format!("{name} learned of checkpoint {checkpoint}{how} while {ch} held EndOfPartition, so barrier {checkpoint} goes right before it: the records still queued ahead of EndOfPartition stay inside the cut"),
        )
    }

    fn snapshot(&mut self, subtask: SubtaskId, checkpoint: u64, finished: bool) -> Told {
        self.tasks[subtask.index()].aligning = None;
        let name = self.name(subtask);
        if !finished {
            let what = if self.unaligned {
                "its operator state (unaligned: in-flight buffers follow as channel state)"
            } else {
                "its operator state"
            };
            return told(
                name,
                "P1.4",
                format!("snapshots {what} for checkpoint {checkpoint} to durable storage and acknowledges it"),
            );
        }
        let (rule, why) = match self.protocol {
            Some(FinishProtocol::Flink) => (
                "F1.5 step 2",
                "the first checkpoint after its end of input: its final checkpoint, flagged 'task finished'",
            ),
            _ if self.is_two_phase_sink(subtask) => (
                "P1.7",
                "taken after its end of input: it covers the sink's final state, so its completion lets the last transaction commit",
            ),
            _ => ("P1.2", "taken after its end of input: its final state"),
        };
        key(
            name,
            rule,
            format!("snapshot for checkpoint {checkpoint}, {why}"),
            "final checkpoint",
        )
    }

    fn completed(&self, checkpoint: u64) -> Told {
        let record = self
            .report
            .checkpoints
            .get((checkpoint as usize).wrapping_sub(1))
            .filter(|r| r.id == checkpoint);
        let detail = match record {
            Some(r) => {
                let took = match r.outcome {
                    Outcome::Completed(at) => format!(
                        " {} after it was triggered",
                        at.saturating_duration_since(r.triggered_at)
                    ),
                    Outcome::Pending | Outcome::Aborted(..) => String::new(),
                };
                let finished = if r.plan.finished.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", plus finished markers for [{}]",
                        self.names(&r.plan.finished)
                    )
                };
                format!(
                    ":{took}, every one of the {} awaited subtasks acknowledged{finished}",
                    r.plan.to_wait_for.len()
                )
            }
            None => String::new(),
        };
        key(
            CC,
            "P1.1",
            format!("checkpoint {checkpoint} COMPLETED{detail}; the tasks are notified"),
            "checkpoint completed",
        )
    }

    fn aborted(&self, checkpoint: u64, reason: AbortReason) -> Told {
        let (rule, why): (&str, String) = match reason {
            AbortReason::TriggerMissed => (
                if self.legacy() { "P1.2 legacy" } else { "F1.2" },
                "a trigger reached a task that had already finished; without re-triggering, the whole checkpoint is aborted and the next one plans again".to_owned(),
            ),
            AbortReason::Declined(d) => {
                let (rule, why) = decline_rule(d);
                (rule, format!("a task declined: {why}"))
            }
            AbortReason::Expired => (
                "P4 checkpoint-progress",
                "it did not complete within its timeout".to_owned(),
            ),
            AbortReason::Failover => (
                "P1.8",
                "a failover reset tasks it was waiting for".to_owned(),
            ),
            AbortReason::Subsumed => ("F1.3", "a newer checkpoint completed first".to_owned()),
            AbortReason::JobEnded => ("P1.1", "the job ended with it still pending".to_owned()),
            AbortReason::TriggerFailed => (
                "F1.9",
                "a trigger reached a TaskManager that no longer hosts that attempt of the task (TASK_CHECKPOINT_FAILURE); not counted against tolerable_failures".to_owned(),
            ),
        };
        key(
            CC,
            rule,
            format!("checkpoint {checkpoint} ABORTED ({}): {why}", reason.id()),
            "checkpoint aborted",
        )
    }
}

/// The rule behind a decline and what it means.
fn decline_rule(reason: DeclineReason) -> (&'static str, &'static str) {
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

fn address(a: crate::trace::Address) -> String {
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

fn element_name(element: Element) -> String {
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

/// How narrations are written.
pub struct ExplainStyle {
    /// Emit ANSI colour codes (the caller decides from `--color`, `NO_COLOR` and the terminal).
    pub color: bool,
    /// Start each line with the trace event's number (`--numbers`), the number violations,
    /// `--trace` files and `view` use.
    pub numbers: bool,
}

/// A violation as a narration, to be told right after the event where it was first visible
/// (its own index): a key moment naming the invariant and the event.
pub fn violation_narration(v: &crate::oracle::Violation) -> Narration {
    Narration {
        index: v.event_index,
        time: v.time,
        actor: if v.actors.is_empty() {
            "oracle".to_owned()
        } else {
            v.actors.join(",")
        },
        rule: Some(v.invariant.to_string()),
        text: format!(
            "{} (violation first visible at event {})",
            v.message, v.event_index
        ),
        key: Some("violation"),
        why: None,
    }
}

const KEY_STYLE: Style = AnsiColor::Yellow.on_default().bold();
const RULE_STYLE: Style = AnsiColor::Cyan.on_default();
const ACTOR_STYLE: Style = AnsiColor::Green.on_default();
const TIME_STYLE: Style = Style::new().dimmed();

fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_owned()
    }
}

/// Writes one narration: `time  actor  rule: text`, a key moment set apart by blank lines
/// and a `==>` marker with its label; `short` leaves out the explanation (given before).
/// `after_blank` says whether a blank line was just written (after the header, after a key
/// moment), so that key moments in a row are one blank line apart, not two.
pub fn write_narration(
    out: &mut dyn Write,
    n: &Narration,
    style: &ExplainStyle,
    short: bool,
    after_blank: bool,
) -> io::Result<()> {
    let c = style.color;
    let text = match n.why {
        Some(at) if short => &n.text[..at],
        _ => &n.text,
    };
    let time = paint(c, TIME_STYLE, &format!("{:>14}", n.time.to_string()));
    let time = if style.numbers {
        format!("{:>7}  {time}", format!("#{}", n.index))
    } else {
        time
    };
    let actor = paint(c, ACTOR_STYLE, &format!("{:<16}", n.actor));
    let rule = n
        .rule
        .as_ref()
        .map_or(String::new(), |r| format!("{}: ", paint(c, RULE_STYLE, r)));
    match n.key {
        Some(label) => {
            if !after_blank {
                writeln!(out)?;
            }
            let marker = paint(c, KEY_STYLE, &format!("==> {}", label.to_uppercase()));
            writeln!(out, "{marker}")?;
            writeln!(
                out,
                "{time}  {actor} {rule}{}",
                paint(c, Style::new().bold(), text)
            )?;
            writeln!(out)
        }
        None => writeln!(out, "{time}  {actor} {rule}{text}"),
    }
}

/// Counts narrations per rule cited, for a closing "rules seen" line.
pub fn rules_cited(narrations: &[Narration]) -> Vec<(String, usize)> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for n in narrations {
        if let Some(rule) = &n.rule {
            for part in rule.split(", ") {
                *counts.entry(part).or_default() += 1;
            }
        }
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().map(|(r, n)| (r.to_owned(), n)).collect();
    v.sort();
    v
}
