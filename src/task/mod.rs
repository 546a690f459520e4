//! The task (Flink's `StreamTask`): one attempt of one subtask, running its operator on the
//! records of its input channels, taking part in checkpoints, and finishing by the rules of
//! its finish protocol.
//!
//! A task does one thing at a time, like Flink's mailbox thread. A **step** takes one element
//! from an input channel and processes it (with network buffers, a record and the rest of its
//! buffer, `docs/rules.md` F1.14 step 9; for a source, it emits the next record), pushes the
//! outputs, and then the task is busy for the operator's processing time (or the source's
//! pace). When an output channel is full the task stops until the consumer returns credit; when
//! no input is available it sleeps until some arrives.
//!
//! Lifecycle: CREATED → DEPLOYING → INITIALIZING → RUNNING; then the `Phase`s
//! *processing* → *end of input* → *closing* → FINISHED. "End of input" is when a source ran
//! out, or every input delivered EndOfPartition (EndOfData in `flink`); what the task waits
//! for before *closing* (emitting EndOfPartition) is what the finish protocols differ in.

mod at_least_once;
mod barrier;
mod cancel;
mod chain;
mod notify;
mod operator;
mod output;
mod pacing;
mod reader;
mod savepoint;
mod step;
mod tracker;
mod unaligned;

use crate::bug::Bug;
use crate::checkpoint::storage::{ChainState, SubtaskSnapshot};
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::net::draw;
use crate::record::{source_record, Element, Record, StopMode};
use crate::scenario::{DurationRange, FinishProtocol, SnapshotPhase};
use crate::source_mutant::{on, SourceMutant};
use crate::status::ExecutionState;
use crate::trace::{
    Address, Call, CheckpointSet, DeclineReason, FaultEvent, Restore, Rpc, TraceEvent,
};
use crate::world::{Ctx, Event, TaskCtx};
use barrier::BarrierHandler;
use chain::{Flow, OperatorChain};
use reader::Idle;
use sim::Instant;
use std::collections::{BTreeSet, VecDeque};
use tracker::BarrierTracker;
use unaligned::UnalignedCheckpoint;

/// Where a running task is in its work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Consuming records (or, for a source, emitting them).
    Processing,
    /// End of input: operators have emitted everything; the task still takes part in
    /// checkpoints and waits until its finish protocol lets it close.
    EndOfInput,
    /// EndOfPartition is queued behind the last outputs; FINISHED once all are on the wire.
    Closing,
    Finished,
}

/// `option2`'s "finishing" exchange with the CheckpointCoordinator (P1.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Finishing {
    NotAsked,
    Asked,
    Answered,
}

pub struct Task {
    id: SubtaskId,
    /// Whose records a source emits: itself, or (F1.13) its vertex's subtask 0 for a reader.
    origin: SubtaskId,
    attempt: u32,
    task_manager: u32,
    state: ExecutionState,
    phase: Phase,
    /// When the task reached a terminal state: a TaskManager keeps reporting it for
    /// `terminal_state_retention` (P3.1).
    ended_at: Option<Instant>,
    /// The operators it runs, head first (F1.12).
    chain: OperatorChain,
    process_time: DurationRange,
    /// Input slots (positions in the subtask's `inputs`) with buffered elements that are not
    /// blocked by alignment, in the order they became available (Flink's
    /// `inputChannelsWithData`), each with its channel: looking the channel up in the
    /// subtask's `inputs` at every take was a cache miss of its own in a job with a thousand
    /// inputs per subtask.
    available: VecDeque<(u32, ChannelId)>,
    /// Input channels that have not delivered EndOfPartition.
    open_inputs: u32,
    /// `flink`: input channels that have not delivered EndOfData.
    data_inputs: u32,
    barriers: BarrierHandler,
    /// At least once (F1.7): the barrier counts that stand in for `barriers`' alignment, which
    /// then never starts (it only keeps track of EndOfPartition per channel).
    tracker: Option<BarrierTracker>,
    /// Outputs not yet on the wire, in emission order. A full channel at the head blocks
    /// everything behind it, like Flink's record writer waiting for a buffer.
    pending_out: VecDeque<(ChannelId, Element)>,
    /// Per output gate, the round-robin position of its partitioner.
    round_robin: Vec<u32>,
    /// A `TaskStep` event is in the queue for this attempt.
    step_scheduled: bool,
    /// F1.14: an `OutputFlush` event is in the queue for this attempt.
    flusher_armed: bool,
    /// Waiting for credit on this channel before pushing more.
    blocked_on: Option<ChannelId>,
    /// The highest checkpoint id this task has learned of.
    latest_checkpoint: u64,
    /// It learned of `latest_checkpoint` by trigger RPC: a synchronous part that fails for it
    /// is declined as well (F1.9, Flink's RPC path).
    latest_by_trigger: bool,
    /// F1.9: checkpoints whose asynchronous part is to fail (a `fail_snapshot` fault): they are
    /// declined when it ends, not acknowledged.
    failing_uploads: Vec<u64>,
    /// Checkpoints newer than `latest_checkpoint` whose abort was notified before their first
    /// barrier arrived: their barriers are stale. Only those: an older checkpoint still
    /// pending must not become stale with them (fuzz seed 1015619: a task skipped barrier 8
    /// because 9 had been aborted, and downstream alignments of 8 deadlocked).
    aborted_ahead: BTreeSet<u64>,
    /// Checkpoints performed (acknowledged) and not yet notified complete or aborted.
    unnotified: BTreeSet<u64>,
    /// P1.6: the checkpoints it took part in when its input ended, which it waits for.
    wait_at_end: BTreeSet<u64>,
    /// The first checkpoint performed after end of input (F1.5 step 2; P1.7's "checkpoint that
    /// includes its final state").
    final_checkpoint: Option<u64>,
    /// A checkpoint with id ≥ `final_checkpoint` was notified complete.
    final_complete: bool,
    /// `flink`: output channels whose consumer has not yet acknowledged all records processed.
    unacknowledged_outputs: u32,
    finishing: Finishing,
    /// Deployed *finished on restore* (F1.6): the restored checkpoint records this subtask
    /// finished (or its operators finished), so it runs no operator lifecycle and processes no
    /// records; it only passes the end of the stream on.
    finished_on_restore: bool,
    /// An unaligned checkpoint whose snapshot is taken but whose channel state is not yet
    /// complete (P1.4).
    unaligned: Option<UnalignedCheckpoint>,
    /// Restored input channel state, processed before any new input (P1.8).
    replay: VecDeque<(ChannelId, Record)>,
    /// F1.8: snapshots whose asynchronous part is still running, oldest first.
    uploading: Vec<(u64, SubtaskSnapshot)>,
    /// The task may close (or, with everything sent, finish), but waits for `uploading` to
    /// empty first.
    close_after_upload: bool,
    finish_after_upload: bool,
    /// F1.11: a stop-with-savepoint, as far as this task knows of it.
    stop: savepoint::Stop,
    /// F1.14 step 10: the records of the buffer the current step takes, for its one trace
    /// event (reused, so a step does not allocate).
    taken: Vec<Record>,
    /// F1.14 step 11: a lone source at a fixed pace, written lazily.
    pacing: Option<pacing::Pacing>,
}

impl Task {
    /// A new attempt, in state CREATED, on TaskManager `task_manager`.
    pub fn new<R>(
        ctx: &Ctx<'_, '_, R>,
        id: SubtaskId,
        attempt: u32,
        task_manager: u32,
        restore: Restore,
    ) -> Task {
        let graph = ctx.graph;
        let vertex = graph.vertex_of(id);
        let subtask = &graph.subtasks[id.index()];
        let inputs = subtask.inputs.len();
        let outputs: usize = subtask.outputs.iter().map(|g| g.channels.len()).sum();
        let mut chain = OperatorChain::new(&vertex.chain, subtask.index);
        if ctx.config.bug == Some(Bug::SourceEndsEarly) && chain.is_source() {
            chain.end_one_record_early(); // the bug: an off-by-one in the end-of-input test
        }
        // F1.13: a reader's records are named by its vertex's subtask 0, not by the reader.
        let origin = match vertex.splits {
            Some(_) => {
                chain.read_splits();
                SubtaskId(vertex.first)
            }
            None => id,
        };
        let snapshot = (restore.checkpoint > 0)
            .then(|| ctx.io.storage.snapshot(restore.checkpoint, id))
            .flatten();
        let mut replay = VecDeque::new();
        let mut pending_out = VecDeque::new();
        if let Some(snapshot) = snapshot {
            chain.restore(&snapshot.state);
            // P1.8 with channel state (P1.4): in-flight input is processed again before new
            // input, and overtaken output is sent again before new output.
            if ctx.config.bug != Some(Bug::IgnoreChannelStateOnRestore) {
                for (slot, records) in &snapshot.input_state {
                    let channel = subtask.inputs[*slot as usize];
                    replay.extend(records.iter().map(|&r| (channel, r)));
                }
                for (channel, records) in &snapshot.output_state {
                    pending_out.extend(records.iter().map(|&r| (*channel, Element::Record(r))));
                }
            }
        }
        // A snapshot taken after end of input restores a finished operator chain (F1.6).
        let finished_on_restore = restore.finished || snapshot.is_some_and(|s| s.finished);
        let pacing = pacing::Pacing::new(ctx, vertex, &chain);
        if finished_on_restore {
            chain.finish_on_restore();
        }
        Task {
            id,
            origin,
            attempt,
            task_manager,
            state: ExecutionState::Created,
            phase: Phase::Processing,
            ended_at: None,
            chain,
            process_time: vertex.process_time,
            available: VecDeque::new(),
            open_inputs: inputs as u32,
            data_inputs: inputs as u32,
            barriers: BarrierHandler::new(inputs),
            tracker: ctx.config.at_least_once.then(BarrierTracker::default),
            pending_out,
            round_robin: vec![0; subtask.outputs.len()],
            step_scheduled: false,
            flusher_armed: false,
            blocked_on: None,
            latest_checkpoint: 0,
            aborted_ahead: BTreeSet::new(),
            latest_by_trigger: false,
            failing_uploads: Vec::new(),
            unnotified: BTreeSet::new(),
            wait_at_end: BTreeSet::new(),
            final_checkpoint: None,
            final_complete: false,
            unacknowledged_outputs: outputs as u32,
            finishing: Finishing::NotAsked,
            finished_on_restore,
            unaligned: None,
            replay,
            uploading: Vec::new(),
            close_after_upload: false,
            finish_after_upload: false,
            stop: savepoint::Stop::default(),
            taken: Vec::new(),
            pacing,
        }
    }

    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    pub fn subtask(&self) -> SubtaskId {
        self.id
    }

    /// Input slot `slot` delivered EndOfPartition: nothing more comes on that channel.
    pub fn input_ended(&self, slot: u32) -> bool {
        self.barriers.is_ended(slot)
    }

    pub fn state(&self) -> ExecutionState {
        self.state
    }

    /// `option2`: the task reported "finishing" and no answer came (P1.2).
    pub fn awaits_finishing_answer(&self) -> bool {
        self.finishing == Finishing::Asked
    }

    /// When the task reached its terminal state, if it has.
    pub fn ended_at(&self) -> Option<Instant> {
        self.ended_at
    }

    /// One line on what the task is doing or waiting for, for a diagnosis of a run that
    /// stopped before the job ended.
    pub fn describe(&self, graph: &ExecutionGraph) -> String {
        let name = graph.subtask_name(self.id);
        let doing = if let Some(channel) = self.blocked_on {
            format!("waits for credit on {}", graph.channel_name(channel))
        } else if let Some(a) = self.barriers.alignment() {
            format!(
                "is aligning checkpoint {} since {}",
                a.checkpoint, a.started
            )
        } else {
            match self.phase {
                Phase::Finished => "has finished".to_owned(),
                Phase::Closing => "waits for its outputs to drain".to_owned(),
                Phase::EndOfInput => format!(
                    "reached end of input and waits to close (pending checkpoints {:?}, final checkpoint {:?} complete: {}, {} outputs unacknowledged)",
                    self.unnotified, self.final_checkpoint, self.final_complete, self.unacknowledged_outputs
                ),
                Phase::Processing if self.step_scheduled => "is busy with a step".to_owned(),
                Phase::Processing => {
                    format!("waits for input on {} open channel(s)", self.open_inputs)
                }
            }
        };
        format!("{name} (attempt {}, {}) {doing}", self.attempt, self.state)
    }

    /// Deploys and starts the task: the TaskManager received `submitTask`.
    pub fn start(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.set_state(ctx, ExecutionState::Deploying);
        self.set_state(ctx, ExecutionState::Initializing);
        // Restoring state takes `cluster.task_initialization`; meanwhile the task takes no
        // input and declines triggers (F1.9).
        if let Some(range) = ctx.config.initialization {
            let took = draw(&mut ctx.io.workload, range);
            ctx.sched.after(
                took,
                Event::TaskInitialized {
                    subtask: self.id,
                    attempt: self.attempt,
                },
            );
            return;
        }
        self.on_initialized(ctx);
    }

    /// The task restored its state: RUNNING, and at work.
    pub fn on_initialized(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        // P1.8: a two-phase-commit sink commits, on restore, the transactions pre-committed in
        // the restored checkpoint (later ones were never restored: they are aborted).
        let restored = self.chain.take_restored_transactions();
        self.commit(ctx, restored);
        self.set_state(ctx, ExecutionState::Running);
        self.arm_output_flush(ctx);
        // Input may have arrived before the task existed: pick it up now.
        let inputs = &ctx.graph.subtasks[self.id.index()].inputs;
        for (slot, &channel) in inputs.iter().enumerate() {
            let buffered = ctx.io.data.buffered(channel);
            if buffered > 0 {
                self.available.push_back((slot as u32, channel));
                if ctx.io.data.last_buffered(channel) == Some(Element::EndOfPartition) {
                    self.barriers.note_eop_enqueued(slot as u32);
                }
            }
        }
        self.step(ctx);
        self.rearm(ctx);
    }

    /// Starts loading the parts of the task an arrival reads (see `sim::prefetch`): at a
    /// million channels a consumer's state has left the cache since its previous arrival.
    #[inline]
    pub fn prefetch(&self) {
        sim::prefetch::read(&self.state);
        sim::prefetch::read(&self.available);
        sim::prefetch::read(&self.barriers);
        sim::prefetch::read(&self.chain);
    }

    /// An element reached the input buffer of `channel`, this task's input `slot`.
    #[inline]
    pub fn on_input(
        &mut self,
        ctx: &mut TaskCtx<'_, '_>,
        channel: ChannelId,
        slot: u32,
        element: Element,
        was_empty: bool,
    ) {
        debug_assert_eq!(slot, ctx.graph.channels[channel.index()].input_slot);
        if self.state != ExecutionState::Running {
            if was_empty && self.barriers.is_blocked(slot) {
                // The end of the alignment unblocks it (`abandon_alignment`) in any state.
                self.barriers.note_holding(slot);
            }
            return;
        }
        if was_empty {
            match self.barriers.is_blocked(slot) {
                false => self.available.push_back((slot, channel)),
                true => self.barriers.note_holding(slot),
            }
        }
        match element {
            Element::EndOfPartition => self.on_eop_enqueued(ctx, slot),
            // P1.4: an unaligned barrier is a priority event, acted on when it arrives, ahead
            // of the data buffered before it.
            Element::PriorityBarrier(n) => {
                ctx.io.data.remove_newest(channel);
                self.on_priority_barrier(ctx, slot, n);
            }
            _ => {}
        }
        self.wake(ctx);
    }

    /// The consumer of `channel` returned a credit.
    pub fn on_credit(&mut self, ctx: &mut TaskCtx<'_, '_>, channel: ChannelId) {
        self.catch_up(ctx);
        if self.blocked_on == Some(channel) {
            self.blocked_on = None;
            self.wake(ctx);
        }
        self.rearm(ctx);
    }

    /// `flink` (F1.5 step 3): the consumer of `channel` processed every record sent on it.
    pub fn on_all_records_processed(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.catch_up(ctx);
        self.unacknowledged_outputs -= 1;
        self.check_close(ctx);
        self.wake(ctx);
        self.rearm(ctx);
    }

    /// The scheduled step is due.
    pub fn on_step(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        debug_assert!(self.step_scheduled);
        self.step_scheduled = false;
        if self.blocked_on.is_none() {
            self.step(ctx);
        }
    }

    /// An RPC for this attempt reached its TaskManager.
    pub fn on_rpc(&mut self, ctx: &mut TaskCtx<'_, '_>, call: Call) {
        self.catch_up(ctx); // F1.14 step 11
        match call {
            Call::TriggerCheckpoint(n) => self.on_trigger(ctx, n),
            Call::TriggerSavepoint { checkpoint, drain } => {
                self.on_trigger_savepoint(ctx, checkpoint, drain)
            }
            Call::NotifyCheckpointComplete(n) => self.on_checkpoint_complete(ctx, n),
            Call::NotifyCheckpointAborted(n) => self.on_checkpoint_aborted(ctx, n),
            Call::FinishingAnswer(owed) => self.on_finishing_answer(ctx, owed),
            Call::AssignSplit(split) => self.chain.assign_split(split),
            Call::CancelTask => unreachable!("the TaskManager cancels tasks itself"),
            Call::SubmitTask { .. }
            | Call::UpdateTaskExecutionState { .. }
            | Call::AcknowledgeCheckpoint { .. }
            | Call::DeclineCheckpoint { .. }
            | Call::TriggerMissed(_)
            | Call::TriggerFailed(_)
            | Call::ReportExecution { .. }
            | Call::ReportDone
            | Call::RequestSplit
            | Call::Finishing
            // A batch job's calls.
            | Call::RegisterTaskManager
            | Call::ReleasePartition
            | Call::AskPartitions
            | Call::ReportPartition { .. }
            | Call::ReportSplit(_)
            | Call::ReportInput { .. } => unreachable!("{call:?} is never sent to a task"),
        }
        // Whatever the call changed (outputs queued, channels unblocked, closing) is carried
        // out by a step. Handlers reached from inside a step never wake: the step's own loop
        // goes on.
        self.wake(ctx);
        self.rearm(ctx);
    }

    /// Acts on where a record came out of the chain (F1.12).
    #[inline]
    fn flow(&mut self, ctx: &mut TaskCtx<'_, '_>, flow: Flow) {
        match flow {
            Flow::Absorbed => {}
            Flow::Emit(record) => self.emit(ctx, record),
            Flow::Sunk(record) => ctx.record(TraceEvent::ChainedSink {
                subtask: self.id,
                record,
            }),
        }
    }

    fn protocol(&self, ctx: &TaskCtx<'_, '_>) -> Option<FinishProtocol> {
        ctx.config.protocol
    }

    // ---- barriers and EndOfPartition (P1.3, P1.4, F1.3) ----

    /// P1.3 step 1: EndOfPartition was enqueued on `slot`; the priority notice reaches the
    /// barrier handler at once.
    fn on_eop_enqueued(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32) {
        self.barriers.note_eop_enqueued(slot);
        // P1.4 unaligned: the buffers before EndOfPartition are the channel's state (only a
        // spilling slot's: `finalize_spill` leaves the others alone).
        self.finalize_spill(ctx, slot, true);
        let Some(alignment) = self.barriers.alignment() else {
            return;
        };
        // P1.3 step 3: insert the pending checkpoint's barrier right before it.
        if matches!(
            self.protocol(ctx),
            Some(FinishProtocol::Option1 | FinishProtocol::Option2)
        ) {
            if ctx.config.bug == Some(Bug::EopNoticeAtAlignmentStart)
                && alignment.started == ctx.now
            {
                // The bug: a notice in the alignment's own instant is taken for the barrier.
                if self.deliver(ctx, slot, self.input(ctx, slot)) {
                    self.aligned(ctx);
                }
                return;
            }
            self.insert_barriers(ctx, alignment.checkpoint);
        }
    }

    /// P1.3 steps 2 and 3: a barrier for `checkpoint` goes right before every buffered
    /// EndOfPartition that has not yet been processed.
    fn insert_barriers(&mut self, ctx: &mut TaskCtx<'_, '_>, checkpoint: u64) {
        let slots: Vec<u32> = self.barriers.slots_awaiting_insertion().collect();
        for slot in slots {
            if ctx.config.bug == Some(Bug::EopNotAligned) {
                continue;
            }
            if ctx.config.bug == Some(Bug::NoBarrierBeforeEop) {
                // The bug: the notice itself counts as the barrier, although records may still
                // be queued before EndOfPartition.
                if self.deliver(ctx, slot, self.input(ctx, slot)) {
                    self.aligned(ctx);
                    return;
                }
                continue;
            }
            let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
            ctx.io
                .data
                .insert_before_eop(channel, Element::Barrier(checkpoint));
            ctx.record(TraceEvent::BarrierInserted {
                subtask: self.id,
                channel,
                checkpoint,
            });
        }
    }

    /// P1.3 step 4 (F1.3 in `flink`): EndOfPartition was processed on `slot`.
    fn on_eop_processed(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32) {
        self.open_inputs -= 1;
        if self.barriers.note_eop_processed(slot) {
            let checkpoint = self.barriers.alignment().map(|a| a.checkpoint).unwrap_or(0);
            match (self.protocol(ctx), ctx.config.bug) {
                // F1.3 with the feature off: EndOfPartition during alignment aborts it.
                (Some(FinishProtocol::Legacy), _) => {
                    self.abandon_alignment(ctx);
                    self.decline(ctx, checkpoint, DeclineReason::InputEndOfStream);
                    self.cancel_downstream(ctx, checkpoint);
                }
                (_, Some(Bug::EopNotAligned)) => {}
                // The channel counts as aligned: every checkpoint needs one barrier fewer.
                _ => {
                    if self.deliver(ctx, slot, self.input(ctx, slot)) {
                        self.aligned(ctx);
                    }
                }
            }
        }
        if self.tracker.is_some() {
            self.track_end_of_partition(ctx, slot);
        }
        // Without EndOfData (every variant but `flink`), end of input is the last
        // EndOfPartition; with it, the last EndOfPartition may be what closing waits for.
        if self.open_inputs == 0 {
            match self.phase {
                Phase::Processing => self.end_of_input(ctx),
                Phase::EndOfInput => self.check_close(ctx),
                Phase::Closing | Phase::Finished => {}
            }
        }
    }

    /// Barrier `n` was dequeued from `slot`, which reads `channel`.
    fn on_barrier(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32, channel: ChannelId, n: u64) {
        if self.tracker.is_some() {
            return self.on_tracked_barrier(ctx, slot, n);
        }
        if self.unaligned.as_ref().is_some_and(|u| u.checkpoint == n) {
            // The alignment timed out and switched to unaligned (F1.3): this barrier ends
            // the channel's spilling; nothing is buffered before it.
            self.finalize_spill(ctx, slot, false);
            self.requeue(ctx, slot);
            return;
        }
        let aligning = self.barriers.alignment().map(|a| a.checkpoint);
        if aligning != Some(n) {
            if self.cancel_aborted_ahead(ctx, n) || self.is_stale(n) {
                // A barrier of a checkpoint already performed, declined or subsumed.
                self.requeue(ctx, slot);
                return;
            }
            self.begin_checkpoint(ctx, n, false);
        }
        if self.deliver(ctx, slot, channel) {
            self.aligned(ctx);
        }
    }

    /// `slot`, which reads `channel`, delivered the barrier being aligned (or counts as if it
    /// had) and is blocked from now on; true when that completes the alignment. If elements
    /// wait behind the barrier, the end of the alignment must unblock the slot: the barrier
    /// handler notes it (`BarrierHandler::note_holding`).
    fn deliver(&mut self, ctx: &TaskCtx<'_, '_>, slot: u32, channel: ChannelId) -> bool {
        // Delivered first: a delivery outside an alignment is the broken invariant to report.
        let aligned = self.barriers.deliver(slot);
        if ctx.io.data.buffered(channel) > 0 {
            self.barriers.note_holding(slot);
        }
        aligned
    }

    /// The channel input `slot` reads.
    fn input(&self, ctx: &TaskCtx<'_, '_>, slot: u32) -> ChannelId {
        ctx.graph.subtasks[self.id.index()].inputs[slot as usize]
    }

    /// The task learns of checkpoint `n`, newer than any it knew: by trigger RPC (or
    /// `option2`'s finishing answer) or by its first barrier.
    fn learn_of(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, by_trigger: bool) {
        self.latest_checkpoint = n;
        self.latest_by_trigger = by_trigger;
        self.aborted_ahead.retain(|&a| a > n);
        ctx.record(TraceEvent::CheckpointSeen {
            subtask: self.id,
            checkpoint: n,
            by_trigger,
        });
    }

    /// A barrier or trigger of checkpoint `n` comes too late: the task has learned of `n` or a
    /// newer checkpoint already, or `n` was aborted before it arrived.
    fn is_stale(&self, n: u64) -> bool {
        // source mutant stale-barrier-exclusive
        let performed = if on(SourceMutant::StaleBarrierExclusive) {
            n < self.latest_checkpoint
        } else {
            n <= self.latest_checkpoint
        };
        performed || self.aborted_ahead.contains(&n)
    }

    /// A barrier that blocks nothing (a stale one, or any under at-least-once): put its
    /// channel back in the queue.
    fn requeue(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32) {
        let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
        if ctx.io.data.buffered(channel) > 0 && !self.barriers.is_blocked(slot) {
            self.available.push_back((slot, channel));
        }
    }

    /// The task learns of checkpoint `n` (barrier or trigger). A newer checkpoint subsumes one
    /// still aligning (F1.3).
    fn begin_checkpoint(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, by_trigger: bool) {
        self.subsume(ctx);
        self.learn_of(ctx, n, by_trigger);
        self.barriers.start(n, ctx.now);
        if let (Some(timeout), false) = (ctx.config.alignment_timeout, by_trigger) {
            ctx.sched.after(
                timeout,
                Event::AlignmentTimeout {
                    subtask: self.id,
                    attempt: self.attempt,
                    checkpoint: n,
                },
            );
        }
        // P1.3 step 2.
        if matches!(
            self.protocol(ctx),
            Some(FinishProtocol::Option1 | FinishProtocol::Option2)
        ) {
            self.insert_barriers(ctx, n);
        }
    }

    /// A newer checkpoint subsumes the one still aligning or spilling (F1.3).
    fn subsume(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if let Some(old) = self.barriers.alignment() {
            self.abandon_alignment(ctx);
            self.decline(ctx, old.checkpoint, DeclineReason::Subsumed);
            self.cancel_downstream(ctx, old.checkpoint);
        }
        if let Some(old) = self.unaligned.take() {
            self.decline(ctx, old.checkpoint, DeclineReason::Subsumed);
            self.cancel_downstream(ctx, old.checkpoint);
        }
    }

    /// Unaligned barrier `n` arrived on `slot` (P1.4): the first one makes the task snapshot
    /// at once; each one ends its channel's spilling.
    fn on_priority_barrier(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32, n: u64) {
        if self.barriers.alignment().is_some_and(|a| a.checkpoint == n) {
            // An upstream already switched this checkpoint to unaligned (its alignment timed
            // out): so does this task, at once (F1.3).
            self.snapshot_unaligned(ctx, n);
        }
        if self.unaligned.as_ref().is_none_or(|u| u.checkpoint != n) {
            if self.phase == Phase::Closing
                || self.phase == Phase::Finished
                || self.cancel_aborted_ahead(ctx, n)
                || self.is_stale(n)
            {
                return; // stale, or the task is past taking part
            }
            self.subsume(ctx);
            self.learn_of(ctx, n, false);
            self.snapshot_unaligned(ctx, n);
        }
        if ctx.config.bug == Some(Bug::UnalignedSpillAfterBarrier) {
            // The bug: the channel keeps spilling past its barrier until the others are done.
            if let Some(u) = &mut self.unaligned {
                u.late(slot);
            }
        }
        self.finalize_spill(ctx, slot, true);
    }

    /// F1.3: the aligned checkpoint `n` has been aligning too long: switch to unaligned for the
    /// channels that still owe a barrier.
    pub fn on_alignment_timeout(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        if self.barriers.alignment().is_none_or(|a| a.checkpoint != n) {
            return;
        }
        self.snapshot_unaligned(ctx, n);
        self.wake(ctx);
    }

    /// Takes the unaligned snapshot for `n` now (P1.4): the operator state; the barrier
    /// overtakes the output queue, whose records become output channel state; every input
    /// channel still owing a barrier starts spilling.
    fn snapshot_unaligned(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        // Channels that delivered barrier n while aligning (before a timeout) are done.
        let inputs = ctx.graph.subtasks[self.id.index()].inputs.len() as u32;
        let delivered: Vec<bool> = (0..inputs).map(|s| self.barriers.is_blocked(s)).collect();
        if self.barriers.alignment().is_some() {
            let took = ctx.now - self.barriers.alignment().expect("checked").started;
            if let Some(record) = ctx.io.stats.get_mut(n) {
                record.alignments.push((self.id, took));
            }
            self.abandon_alignment(ctx);
        }
        let Some((state, finished)) = self.capture(ctx, n) else {
            return; // the synchronous part failed, and the task with it
        };
        ctx.record(TraceEvent::Snapshot {
            subtask: self.id,
            attempt: self.attempt,
            checkpoint: n,
            finished,
        });
        let drop_state = ctx.config.bug == Some(Bug::UnalignedDropChannelState);
        let mut output_state: Vec<(ChannelId, Vec<Record>)> = Vec::new();
        if ctx.io.data.uses_buffers() && !drop_state {
            // F1.14 step 6: the current buffers, not yet sent, are overtaken too.
            for gate in &ctx.graph.subtasks[self.id.index()].outputs {
                for &channel in &gate.channels {
                    let unsent = ctx.io.data.unsent(channel) as usize;
                    if unsent == 0 {
                        continue;
                    }
                    let queued = ctx.io.data.queued(channel);
                    let records = (queued - unsent..queued)
                        .filter_map(|i| match ctx.io.data.element(channel, i) {
                            Element::Record(r) => Some(r),
                            _ => None,
                        })
                        .collect();
                    output_state.push((channel, records));
                }
            }
        }
        for &(channel, element) in &self.pending_out {
            if let (Element::Record(r), false) = (element, drop_state) {
                match output_state.iter_mut().find(|(c, _)| *c == channel) {
                    Some((_, records)) => records.push(r),
                    None => output_state.push((channel, vec![r])),
                }
            }
        }
        for (channel, records) in &output_state {
            ctx.record(TraceEvent::ChannelState {
                subtask: self.id,
                checkpoint: n,
                channel: *channel,
                records: records.len() as u32,
                output: true,
            });
            // F1.14 step 6: in buffers, the partly filled current one and full ones after it.
            let buffers = if ctx.io.data.uses_buffers() {
                let unsent = u64::from(ctx.io.data.unsent(*channel));
                let per_buffer = ctx.io.data.records_per_buffer();
                unaligned::output_state_buffers(records.len() as u64, unsent, per_buffer)
            } else {
                0
            };
            if let Some(stats) = ctx.io.stats.get_mut(n) {
                stats.output_state_records += records.len() as u64;
                stats.output_state_buffers += buffers;
            }
        }
        // The barrier goes on the wire at once, ahead of the queued output.
        for gate in &ctx.graph.subtasks[self.id.index()].outputs {
            for &channel in &gate.channels {
                ctx.push(channel, Element::PriorityBarrier(n));
            }
        }
        let mut checkpoint =
            UnalignedCheckpoint::new(n, state, finished, output_state, inputs as usize);
        let lose_buffers = ctx.config.bug == Some(Bug::TimeoutSwitchLosesBuffers);
        let mut ready_now = Vec::new();
        for slot in 0..inputs {
            if delivered[slot as usize] || self.barriers.is_ended(slot) {
                continue;
            }
            let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
            let skip = if lose_buffers {
                ctx.io.data.buffered_records(channel).len() as u32
            } else {
                0
            };
            // Restored channel state still being replayed is in flight across this cut too.
            let replaying: Vec<Record> = self
                .replay
                .iter()
                .filter(|(c, _)| *c == channel)
                .map(|(_, r)| *r)
                .collect();
            checkpoint.spill(slot, replaying, skip);
            if ctx.io.data.uses_buffers() {
                checkpoint.note_consumed(slot, ctx.io.data.buffers_consumed(channel));
            }
            if self.barriers.is_eop_enqueued(slot) {
                ready_now.push(slot);
            }
        }
        self.unaligned = Some(checkpoint);
        // Channels whose EndOfPartition is already buffered: what precedes it is their state.
        for slot in ready_now {
            self.finalize_spill(ctx, slot, true);
        }
        self.maybe_acknowledge_unaligned(ctx);
    }

    /// `slot` delivered its unaligned barrier (or EndOfPartition): record its channel state.
    /// `buffered`: the records still queued on the channel precede the barrier.
    fn finalize_spill(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32, buffered: bool) {
        // Only a spilling slot has state to record: the queued records are gathered for it
        // alone (every EndOfPartition enqueued comes here, aligned checkpoints' too).
        let Some(u) = self.unaligned.as_mut().filter(|u| u.is_spilling(slot)) else {
            return;
        };
        let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
        let queued = if buffered {
            ctx.io.data.buffered_records(channel)
        } else {
            Vec::new()
        };
        let drop_state = ctx.config.bug == Some(Bug::UnalignedDropChannelState);
        let checkpoint = u.checkpoint;
        // F1.14 step 6: the buffers holding the state: those finished while spilling, and
        // those still queued (a partly taken one counts whole).
        let buffers = if ctx.io.data.uses_buffers() {
            u.consumed_since_spill(slot, ctx.io.data.buffers_consumed(channel))
                + u64::from(ctx.io.data.buffers_holding(channel, queued.len() as u32))
        } else {
            0
        };
        let Some(records) = u.finalize(
            slot,
            if drop_state { Vec::new() } else { queued },
            drop_state,
        ) else {
            return;
        };
        if records > 0 {
            ctx.record(TraceEvent::ChannelState {
                subtask: self.id,
                checkpoint,
                channel,
                records: records as u32,
                output: false,
            });
            if let Some(stats) = ctx.io.stats.get_mut(checkpoint) {
                stats.input_state_records += records as u64;
                stats.input_state_buffers += buffers;
            }
        }
        self.maybe_acknowledge_unaligned(ctx);
    }

    /// Every channel's state is complete: write the snapshot and acknowledge (P1.4: "the
    /// checkpoint is acknowledged once every channel delivered its barrier or EndOfPartition").
    fn maybe_acknowledge_unaligned(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if !self.unaligned.as_ref().is_some_and(|u| u.complete()) {
            return;
        }
        let mut u = self.unaligned.take().expect("checked");
        for (slot, records) in u.finish_late() {
            let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
            ctx.record(TraceEvent::ChannelState {
                subtask: self.id,
                checkpoint: u.checkpoint,
                channel,
                records: records as u32,
                output: false,
            });
        }
        self.acknowledge(
            ctx,
            u.checkpoint,
            SubtaskSnapshot {
                attempt: self.attempt,
                finished: u.finished,
                state: u.state,
                input_state: u.input_state,
                output_state: u.output_state,
            },
        );
        self.check_close(ctx);
    }

    /// The trigger RPC for checkpoint `n` (P1.1: sources and tasks whose inputs all finished).
    fn on_trigger(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        let protocol = self.protocol(ctx);
        if matches!(
            self.state,
            ExecutionState::Created | ExecutionState::Deploying | ExecutionState::Initializing
        ) && ctx.config.bug != Some(Bug::SnapshotBeforeRunning)
        {
            // F1.9: Flink's `Task.triggerCheckpointBarrier` takes a checkpoint only while
            // RUNNING; before, it declines (not counted against tolerable failures).
            return self.decline(ctx, n, DeclineReason::TaskNotReady);
        }
        // P1.5: with `flush_before_finish`, a closing task still runs while its result
        // partition drains, and takes part in (unaligned) checkpoints meanwhile.
        if self.close_after_upload || self.finish_after_upload {
            // F1.8: a task that waits for its uploads to close or finish is closing (Flink's
            // mailbox takes no new checkpoint once the task prepares to close): it declines,
            // in every protocol, so that no new upload keeps it waiting.
            return self.decline(ctx, n, DeclineReason::TaskClosing);
        }
        let draining = self.draining(ctx);
        match self.phase {
            Phase::Closing if draining => {}
            Phase::Closing | Phase::Finished => {
                match protocol {
                    // P1.2 option2: a trigger after the finishing report is ignored.
                    Some(FinishProtocol::Option2) | None => {}
                    // F1.5 step 4: a closing task declines.
                    Some(FinishProtocol::Flink) if self.phase == Phase::Closing => {
                        self.decline(ctx, n, DeclineReason::TaskClosing)
                    }
                    // The task is gone (or as good as): the trigger missed (P1.2).
                    Some(_) => self.send(ctx, Call::TriggerMissed(n)),
                }
                return;
            }
            Phase::Processing | Phase::EndOfInput => {}
        }
        if self.cancel_aborted_ahead(ctx, n) || self.is_stale(n) {
            return; // already learned of it from a barrier (or an earlier trigger), or aborted
        }
        if self.chain.is_source() {
            self.learn_of(ctx, n, true);
            self.perform_checkpoint(ctx, n);
            return;
        }
        if self.tracker.is_some() {
            return self.on_tracked_trigger(ctx, n);
        }
        self.begin_checkpoint(ctx, n, true);
        if self.barriers.all_ended() {
            // P1.3 step 5 / F1.4: every input finished: snapshot at once.
            self.aligned(ctx);
        } else if protocol == Some(FinishProtocol::Flink)
            // The bug: bookkeep the trigger and wait for EndOfPartition on every channel, as
            // the design's first case does, instead of F1.4's barriers into the open channels.
            && ctx.config.bug != Some(Bug::TriggerWaitsForInput)
        {
            // F1.4: process the barrier as if it arrived on every still-open channel. Their
            // producers acknowledged EndOfData already, so no record is left before it.
            let slots = ctx.graph.subtasks[self.id.index()].inputs.len() as u32;
            let mut done = false;
            for slot in 0..slots {
                done = self.deliver(ctx, slot, self.input(ctx, slot)) || done;
            }
            if done {
                self.aligned(ctx);
            }
        }
    }

    /// Every channel delivered the barrier (or EndOfPartition): snapshot, forward, acknowledge.
    fn aligned(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        let alignment = self
            .barriers
            .alignment()
            .expect("aligned without an alignment");
        let took = ctx.now - alignment.started;
        ctx.record(TraceEvent::AlignmentDone {
            subtask: self.id,
            checkpoint: alignment.checkpoint,
            alignment: took,
        });
        if let Some(record) = ctx.io.stats.get_mut(alignment.checkpoint) {
            record.alignments.push((self.id, took));
        }
        self.abandon_alignment(ctx);
        self.perform_checkpoint(ctx, alignment.checkpoint);
    }

    /// Ends the alignment and unblocks its channels that hold elements (only those the barrier
    /// handler names can).
    fn abandon_alignment(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        let inputs = &ctx.graph.subtasks[self.id.index()].inputs;
        // The full scan the noted slots stand in for, in debug builds (every test the CI
        // runs): each blocked slot that holds elements must be among them.
        #[cfg(debug_assertions)]
        let must: Vec<u32> = (0..inputs.len() as u32)
            .filter(|&slot| {
                self.barriers.is_blocked(slot) && ctx.io.data.buffered(inputs[slot as usize]) > 0
            })
            .collect();
        #[cfg(debug_assertions)]
        let before = self.available.len();
        for slot in self.barriers.finish() {
            let channel = inputs[slot as usize];
            if ctx.io.data.buffered(channel) > 0 {
                self.available.push_back((slot, channel));
            }
        }
        #[cfg(debug_assertions)]
        {
            let unblocked: Vec<u32> = self.available.iter().skip(before).map(|a| a.0).collect();
            debug_assert_eq!(unblocked, must, "{}: slots left blocked", self.id.index());
        }
    }

    /// Takes the snapshot for checkpoint `n`, forwards the barrier and acknowledges. In
    /// unaligned mode the barrier overtakes the queued output (P1.4).
    fn perform_checkpoint(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        if ctx.config.unaligned {
            // Every input is done (or there is none); the barrier still overtakes the queued
            // output, which becomes output channel state (P1.4).
            return self.snapshot_unaligned(ctx, n);
        }
        let Some((state, finished)) = self.capture(ctx, n) else {
            return; // the synchronous part failed, and the task with it
        };
        ctx.record(TraceEvent::Snapshot {
            subtask: self.id,
            attempt: self.attempt,
            checkpoint: n,
            finished,
        });
        self.broadcast(ctx, Element::Barrier(n));
        self.acknowledge(
            ctx,
            n,
            SubtaskSnapshot {
                attempt: self.attempt,
                finished,
                state,
                input_state: Vec::new(),
                output_state: Vec::new(),
            },
        );
    }

    /// The operator state for checkpoint `n` (a two-phase-commit sink pre-commits here), and
    /// whether it is final (taken after end of input, F1.5 step 2). `None` when a
    /// `fail_snapshot` fault breaks the synchronous part: the task has failed (F1.9).
    fn capture(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) -> Option<(ChainState, bool)> {
        if let Some((index, phase)) = ctx.io.faults.snapshot_fails(ctx.graph, self.id, n, ctx.now) {
            let sync = phase == SnapshotPhase::Sync;
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::FailSnapshot {
                    subtask: self.id,
                    checkpoint: n,
                    sync,
                },
            });
            if !sync {
                // F1.9: the state is written in the asynchronous part; it is that part that
                // fails, so the barrier still goes on.
                self.failing_uploads.push(n);
            } else {
                // F1.9: an exception in `snapshotState` fails the task. On the RPC path (a
                // trigger it acts on at once) Flink's `Task` declines first (TASK_FAILURE);
                // on the barrier path nothing is declined.
                if self.latest_by_trigger && self.latest_checkpoint == n {
                    self.decline(ctx, n, DeclineReason::TaskFailure);
                }
                self.pending_out.clear();
                self.fail(ctx);
                return None;
            }
        }
        // Final: taken after end of input, also while a closing task drains its partition
        // (P1.5 `flush_before_finish`): a restore must not run its operators' ending again.
        // A task deployed finished on restore says so in every snapshot (F1.6: "its
        // checkpoint acks say deployed as finished"), or a later restore would revive it.
        let ended =
            self.finished_on_restore || matches!(self.phase, Phase::EndOfInput | Phase::Closing);
        let finished = ended && self.after_input_snapshot(n);
        let state = self
            .chain
            .snapshot(n, ctx.config.bug == Some(Bug::SnapshotHeadOnly));
        if ctx.config.bug == Some(Bug::CommitUncoveredTransaction) {
            // The bug: commit at pre-commit, before any checkpoint covers the transaction.
            let transactions = self.chain.commit(n);
            self.commit(ctx, transactions);
        }
        Some((state, finished))
    }

    /// The synchronous part of the snapshot for `n` is done (its barrier went on). With an
    /// asynchronous part (F1.8) the state is written and acknowledged when that part ends;
    /// without, now.
    fn acknowledge(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, snapshot: SubtaskSnapshot) {
        self.unnotified.insert(n);
        let Some(duration) = ctx.config.async_duration else {
            return self.persist(ctx, n, snapshot);
        };
        if ctx.config.bug == Some(Bug::AckBeforeUpload) {
            // The bug: acknowledge with the synchronous part, before the state is durable.
            self.send_acknowledgement(ctx, n, snapshot.finished);
        }
        self.uploading.push((n, snapshot));
        let took = draw(&mut ctx.io.workload, duration);
        ctx.sched.after(
            took,
            Event::SnapshotUploaded {
                subtask: self.id,
                attempt: self.attempt,
                checkpoint: n,
            },
        );
    }

    /// F1.8: the asynchronous part of the snapshot for `n` is over, unless the checkpoint was
    /// aborted meanwhile (which cancels it).
    pub fn on_snapshot_uploaded(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        let Some(i) = self.uploading.iter().position(|(c, _)| *c == n) else {
            return;
        };
        self.catch_up(ctx); // F1.14 step 11
        let (_, snapshot) = self.uploading.remove(i);
        ctx.record(TraceEvent::SnapshotUploaded {
            subtask: self.id,
            attempt: self.attempt,
            checkpoint: n,
        });
        if ctx.config.bug == Some(Bug::AckBeforeUpload) {
            ctx.io.storage.write_snapshot(n, self.id, snapshot);
        } else {
            self.persist(ctx, n, snapshot);
        }
        self.after_upload(ctx);
        // Like an RPC handler: what the upload unblocked (closing, outputs queued) is carried out
        // by a step.
        self.wake(ctx);
        self.rearm(ctx);
    }

    /// The last running upload ended: a task waiting for it to close or to finish goes on. (An
    /// abort notice that cancels the last one needs no call: `on_checkpoint_aborted`.)
    fn after_upload(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if !self.uploading.is_empty() {
            return;
        }
        if self.close_after_upload {
            self.close(ctx);
        } else if self.finish_after_upload {
            self.finish(ctx);
        }
    }

    /// Writes the snapshot to durable storage and acknowledges it, or, when writing fails
    /// (F1.9), declines.
    fn persist(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, snapshot: SubtaskSnapshot) {
        if let Some(i) = self.failing_uploads.iter().position(|&c| c == n) {
            self.failing_uploads.swap_remove(i);
            if ctx.config.bug != Some(Bug::AckFailedSnapshot) {
                // Flink's `AsyncCheckpointRunnable`: CHECKPOINT_ASYNC_EXCEPTION; the task runs on.
                return self.decline(ctx, n, DeclineReason::AsyncException);
            }
        }
        let finished = snapshot.finished;
        ctx.io.storage.write_snapshot(n, self.id, snapshot);
        self.send_acknowledgement(ctx, n, finished);
    }

    fn send_acknowledgement(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, finished: bool) {
        self.send(
            ctx,
            Call::AcknowledgeCheckpoint {
                checkpoint: n,
                finished,
            },
        );
    }

    fn decline(&mut self, ctx: &mut TaskCtx<'_, '_>, checkpoint: u64, reason: DeclineReason) {
        self.send(ctx, Call::DeclineCheckpoint { checkpoint, reason });
    }

    // ---- finishing (P1.2, P1.6, P1.7, F1.5) ----

    /// The source ran out of records, or every input channel ended: operators emit what they
    /// kept for the end (keyed totals); then the task waits to close.
    fn end_of_input(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        ctx.record(TraceEvent::EndOfInput { subtask: self.id });
        if !self.finished_on_restore {
            for flow in self.chain.end_of_input(self.id) {
                self.flow(ctx, flow);
            }
        }
        self.phase = Phase::EndOfInput;
        let cancel = ctx.config.protocol == Some(FinishProtocol::Legacy)
            || ctx.config.bug == Some(Bug::CancelPendingOnFinish);
        match ctx.config.protocol {
            // F1.5 step 1: EndOfData on every output, then keep running for the final
            // checkpoint.
            Some(FinishProtocol::Flink) => self.broadcast(ctx, Element::EndOfData(StopMode::Drain)),
            // P1.6: wait for the checkpoints taken part in so far, not for later ones.
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) => {
                self.wait_at_end = self.unnotified.clone();
            }
            Some(FinishProtocol::Legacy) | None => {}
        }
        if cancel {
            // Legacy P1.6: finishing declines every pending checkpoint.
            let pending: Vec<u64> = self
                .unnotified
                .iter()
                .copied()
                .chain(self.barriers.alignment().map(|a| a.checkpoint))
                .collect();
            if self.barriers.alignment().is_some() {
                self.abandon_alignment(ctx);
            }
            for checkpoint in pending {
                self.decline(ctx, checkpoint, DeclineReason::TaskFinishing);
            }
            // F1.8: declined, their uploads are cancelled (Flink does not wait for pending
            // checkpoints when checkpoints after tasks finish are off).
            self.uploading.clear();
            self.unnotified.clear();
            self.wait_at_end.clear();
        }
        self.check_close(ctx);
    }

    /// Does this task have to wait for a checkpoint covering its final state? Two-phase-commit
    /// sinks do (P1.7); in `flink` every task does (F1.5 step 3); nobody does without
    /// checkpointing or before FLIP-147.
    fn needs_final_checkpoint(&self, ctx: &TaskCtx<'_, '_>) -> bool {
        match ctx.config.protocol {
            Some(FinishProtocol::Flink) => true,
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) => {
                self.chain.needs_checkpoint_complete()
            }
            Some(FinishProtocol::Legacy) | None => false,
        }
    }

    /// Closes the task once its finish protocol allows.
    fn check_close(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if self.phase != Phase::EndOfInput
            || self.barriers.alignment().is_some()
            || self.unaligned.is_some()
        {
            return;
        }
        let final_done = self.final_complete
            || !self.needs_final_checkpoint(ctx)
            || ctx.config.bug == Some(Bug::FinishBeforeFinalCheckpoint);
        let ready = match ctx.config.protocol {
            None | Some(FinishProtocol::Legacy) => true,
            // F1.5 step 3, after the input processor reached END_OF_INPUT: EndOfPartition on
            // every input channel.
            Some(FinishProtocol::Flink) => {
                final_done && self.unacknowledged_outputs == 0 && self.open_inputs == 0
            }
            Some(FinishProtocol::Option1 | FinishProtocol::Option2) => {
                let waited = self
                    .wait_at_end
                    .iter()
                    .all(|c| !self.unnotified.contains(c));
                waited && final_done
            }
        };
        if !ready {
            return;
        }
        if ctx.config.protocol == Some(FinishProtocol::Option2) {
            match self.finishing {
                Finishing::NotAsked => {
                    // P1.2 option2: report "finishing" before EndOfPartition and wait.
                    self.finishing = Finishing::Asked;
                    self.send(ctx, Call::Finishing);
                    return;
                }
                Finishing::Asked => return,
                Finishing::Answered => {}
            }
        }
        self.close(ctx);
    }

    /// `option2`: the coordinator counted this task finished and lists the pending checkpoints
    /// it still owes: perform each (the snapshot is final), then close.
    fn on_finishing_answer(&mut self, ctx: &mut TaskCtx<'_, '_>, owed: CheckpointSet) {
        for n in owed.iter() {
            if n > self.latest_checkpoint {
                self.learn_of(ctx, n, true);
                self.perform_checkpoint(ctx, n);
            }
        }
        self.finishing = Finishing::Answered;
        self.close(ctx);
    }

    /// EndOfPartition on every output; FINISHED once everything is on the wire.
    fn close(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        // F1.8: Flink's task waits for its snapshots' asynchronous parts before its result
        // partitions end (EndOfPartition).
        if !self.uploading.is_empty() && ctx.config.bug != Some(Bug::FinishBeforeUpload) {
            self.close_after_upload = true;
            return;
        }
        self.close_after_upload = false;
        self.phase = Phase::Closing;
        self.broadcast(ctx, Element::EndOfPartition);
        // P1.5: without `flush_before_finish`, the task finishes at once and its result
        // partition (the queued output) drains after it, out of reach of unaligned barriers.
        if ctx.config.unaligned && !ctx.config.flush_before_finish {
            self.finish(ctx);
        }
    }

    /// Everything is on the wire: the task is FINISHED and tells the JobMaster, once the
    /// asynchronous parts of its snapshots are over (F1.8: Flink's task waits for them before
    /// it terminates).
    fn finish(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if !self.uploading.is_empty() {
            if ctx.config.bug != Some(Bug::FinishBeforeUpload) {
                self.finish_after_upload = true;
                return;
            }
            self.uploading.clear(); // the bug: terminating cancels the uploads still running
        }
        self.finish_after_upload = false;
        self.phase = Phase::Finished;
        self.set_state(ctx, ExecutionState::Finished);
    }

    /// The task fails (an injected fault, P1.8): FAILED, reported to the JobMaster. The caller
    /// drops the attempt.
    pub fn fail(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.phase = Phase::Finished;
        self.set_state(ctx, ExecutionState::Failed);
    }

    /// The task dies with its TaskManager: FAILED, and nobody is left to report it.
    pub fn die(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.phase = Phase::Finished;
        self.ended_at = Some(ctx.now);
        let from = std::mem::replace(&mut self.state, ExecutionState::Failed);
        ctx.record(TraceEvent::TaskState {
            subtask: self.id,
            attempt: self.attempt,
            from,
            to: ExecutionState::Failed,
        });
    }

    /// `cancelTask` (failover, P1.8), or the TaskManager lost its JobManager: CANCELING, then
    /// CANCELED once the task thread has stopped. `report` is false when there is no JobManager
    /// to tell. The caller drops the attempt.
    pub fn cancel(&mut self, ctx: &mut TaskCtx<'_, '_>, report: bool) {
        self.phase = Phase::Finished;
        self.ended_at = Some(ctx.now);
        for to in [ExecutionState::Canceling, ExecutionState::Canceled] {
            let from = std::mem::replace(&mut self.state, to);
            ctx.record(TraceEvent::TaskState {
                subtask: self.id,
                attempt: self.attempt,
                from,
                to,
            });
        }
        if report {
            self.send(ctx, Call::update(ExecutionState::Canceled));
        }
    }

    fn send(&self, ctx: &mut TaskCtx<'_, '_>, call: Call) {
        ctx.send(
            Address::TaskManager(self.task_manager),
            Address::JobMaster,
            Rpc {
                subtask: self.id,
                attempt: self.attempt,
                call,
            },
        );
    }

    /// Changes the task's own state and, from INITIALIZING on, reports it to the JobMaster
    /// through the TaskManager (Flink's `updateTaskExecutionState`).
    fn set_state(&mut self, ctx: &mut TaskCtx<'_, '_>, to: ExecutionState) {
        if to.is_terminal() {
            self.ended_at = Some(ctx.now);
        }
        let from = std::mem::replace(&mut self.state, to);
        ctx.record(TraceEvent::TaskState {
            subtask: self.id,
            attempt: self.attempt,
            from,
            to,
        });
        if to != ExecutionState::Deploying {
            self.send(ctx, Call::update(to));
        }
    }
}

#[cfg(test)]
mod tests;
