//! The task (Flink's `StreamTask`): one attempt of one subtask, running its operator on the
//! records of its input channels and writing to its output channels.
//!
//! A task does one thing at a time, like Flink's mailbox thread. A **step** takes one element
//! from an input channel and processes it (or, for a source, emits the next record), pushes the
//! outputs, and then the task is busy for the operator's processing time (or the source's
//! pace) before its next step. When an output channel is full the task stops until the
//! consumer returns credit; when no input is buffered it sleeps until some arrives.
//!
//! Lifecycle (`protocols.md` P0; execution states as in Flink's `Task`):
//! CREATED → DEPLOYING → INITIALIZING → RUNNING, then at end of input the task emits
//! EndOfPartition on every output and, once everything it wrote has been handed to the
//! network, goes FINISHED and reports it to the JobMaster through its TaskManager.

mod operator;

use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::net::draw;
use crate::record::{source_record, Element, Record};
use crate::scenario::DurationRange;
use crate::status::ExecutionState;
use crate::trace::{Address, Rpc, TraceEvent};
use crate::world::{Ctx, Event};
use operator::Operator;
use std::collections::VecDeque;

/// Where a running task is in its work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Consuming input (or, for a source, emitting records).
    Processing,
    /// End of input reached: EndOfPartition is queued behind the last outputs; the task
    /// finishes once they are all on the wire.
    Draining,
    /// Reported FINISHED; nothing more happens.
    Finished,
}

pub struct Task {
    id: SubtaskId,
    attempt: u32,
    task_manager: u32,
    state: ExecutionState,
    phase: Phase,
    operator: Operator,
    process_time: DurationRange,
    inputs: InputGate,
    /// Outputs not yet on the wire, in emission order. A full channel at the head blocks
    /// everything behind it, like Flink's record writer waiting for a buffer.
    pending_out: VecDeque<(ChannelId, Element)>,
    /// Per output gate, the round-robin position of its partitioner.
    round_robin: Vec<u32>,
    /// A `TaskStep` event is in the queue for this attempt.
    step_scheduled: bool,
    /// Waiting for credit on this channel before pushing more.
    blocked_on: Option<ChannelId>,
}

/// The consumer side of a task's input channels.
struct InputGate {
    /// Input slots (positions in the subtask's `inputs`) with buffered elements, in the order
    /// they became available (Flink's `inputChannelsWithData`). A slot is here iff its channel
    /// has something buffered.
    available: VecDeque<u32>,
    /// Channels that have not yet delivered EndOfPartition.
    open: u32,
}

impl Task {
    /// A new attempt, in state CREATED, on TaskManager `task_manager`.
    pub fn new(ctx: &Ctx<'_, '_>, id: SubtaskId, attempt: u32, task_manager: u32) -> Task {
        let graph = ctx.graph;
        let vertex = graph.vertex_of(id);
        let subtask = &graph.subtasks[id.index()];
        Task {
            id,
            attempt,
            task_manager,
            state: ExecutionState::Created,
            phase: Phase::Processing,
            operator: Operator::new(&vertex.operator, subtask.index),
            process_time: vertex.process_time,
            inputs: InputGate {
                available: VecDeque::new(),
                open: subtask.inputs.len() as u32,
            },
            pending_out: VecDeque::new(),
            round_robin: vec![0; subtask.outputs.len()],
            step_scheduled: false,
            blocked_on: None,
        }
    }

    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    pub fn state(&self) -> ExecutionState {
        self.state
    }

    /// One line on what the task is doing or waiting for, for a diagnosis of a run that
    /// stopped before the job ended.
    pub fn describe(&self, graph: &ExecutionGraph) -> String {
        let name = graph.subtask_name(self.id);
        let doing = if let Some(channel) = self.blocked_on {
            format!("waits for credit on {}", graph.channel_name(channel))
        } else {
            match self.phase {
                Phase::Finished => "has finished".to_owned(),
                Phase::Draining => "waits for its outputs to drain".to_owned(),
                Phase::Processing if self.step_scheduled => "is busy with a step".to_owned(),
                Phase::Processing => {
                    format!("waits for input on {} open channel(s)", self.inputs.open)
                }
            }
        };
        format!("{name} (attempt {}, {}) {doing}", self.attempt, self.state)
    }

    /// Deploys and starts the task: the TaskManager received `submitTask`.
    pub fn start(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_state(ctx, ExecutionState::Deploying);
        self.set_state(ctx, ExecutionState::Initializing);
        self.set_state(ctx, ExecutionState::Running);
        // Input may have arrived before the task existed: pick it up now.
        let inputs = &ctx.graph.subtasks[self.id.index()].inputs;
        for (slot, &channel) in inputs.iter().enumerate() {
            if ctx.io.data.buffered(channel) > 0 {
                self.inputs.available.push_back(slot as u32);
            }
        }
        self.step(ctx);
    }

    /// An element reached the input buffer of `channel`.
    #[inline]
    pub fn on_input(&mut self, ctx: &mut Ctx<'_, '_>, channel: ChannelId, was_empty: bool) {
        if self.state != ExecutionState::Running {
            return;
        }
        if was_empty {
            let slot = ctx.graph.channels[channel.index()].input_slot;
            self.inputs.available.push_back(slot);
        }
        if !self.step_scheduled && self.blocked_on.is_none() && self.phase == Phase::Processing {
            self.step(ctx);
        }
    }

    /// The consumer of `channel` returned a credit.
    pub fn on_credit(&mut self, ctx: &mut Ctx<'_, '_>, channel: ChannelId) {
        if self.blocked_on == Some(channel) {
            self.blocked_on = None;
            if !self.step_scheduled {
                self.step(ctx);
            }
        }
    }

    /// The scheduled step is due.
    pub fn on_step(&mut self, ctx: &mut Ctx<'_, '_>) {
        debug_assert!(self.step_scheduled);
        self.step_scheduled = false;
        if self.blocked_on.is_none() {
            self.step(ctx);
        }
    }

    /// Does as much as the task can do now: flush outputs, then take one unit of work and
    /// schedule the end of its processing time, or go idle.
    fn step(&mut self, ctx: &mut Ctx<'_, '_>) {
        loop {
            if !self.flush(ctx) {
                return;
            }
            match self.phase {
                Phase::Processing => {}
                Phase::Draining => return self.finish(ctx),
                Phase::Finished => return,
            }
            if self.operator.is_source() {
                match self.operator.next_source_seq() {
                    Some(seq) => {
                        let record = source_record(self.id, seq);
                        self.emit(ctx, record);
                        self.flush(ctx);
                        let pause = draw(&mut ctx.io.workload, self.operator.source_interval());
                        self.schedule_step(ctx, pause);
                        return;
                    }
                    None => {
                        self.end_of_input(ctx);
                        continue;
                    }
                }
            }
            let Some(slot) = self.inputs.available.pop_front() else {
                return; // idle until input arrives
            };
            let channel = ctx.graph.subtasks[self.id.index()].inputs[slot as usize];
            let (element, wake_producer) = ctx.io.data.take(channel);
            if ctx.io.data.buffered(channel) > 0 {
                self.inputs.available.push_back(slot);
            }
            if wake_producer {
                ctx.sched
                    .after(sim::Duration::ZERO, Event::Credit { channel });
            }
            ctx.record(TraceEvent::Take {
                subtask: self.id,
                channel,
                element,
            });
            match element {
                Element::Record(record) => {
                    if let Some(out) = self.operator.process(record) {
                        self.emit(ctx, out);
                    }
                    self.flush(ctx);
                    let cost = draw(&mut ctx.io.workload, self.process_time);
                    self.schedule_step(ctx, cost);
                    return;
                }
                Element::EndOfPartition => {
                    self.inputs.open -= 1;
                    if self.inputs.open == 0 {
                        self.end_of_input(ctx);
                    }
                }
            }
        }
    }

    fn schedule_step(&mut self, ctx: &mut Ctx<'_, '_>, delay: sim::Duration) {
        self.step_scheduled = true;
        ctx.step_after(delay, self.id, self.attempt);
    }

    /// Routes a record to one channel of every output gate.
    fn emit(&mut self, ctx: &mut Ctx<'_, '_>, record: Record) {
        let gates = &ctx.graph.subtasks[self.id.index()].outputs;
        for (g, gate) in gates.iter().enumerate() {
            let channel = ctx.graph.route(gate, &record, &mut self.round_robin[g]);
            self.pending_out
                .push_back((channel, Element::Record(record)));
        }
    }

    /// Pushes pending outputs until one needs credit its channel does not have. Returns false
    /// when blocked.
    fn flush(&mut self, ctx: &mut Ctx<'_, '_>) -> bool {
        while let Some(&(channel, element)) = self.pending_out.front() {
            if element.needs_credit() && ctx.io.data.is_full(channel) {
                ctx.io.data.wait_for_credit(channel);
                self.blocked_on = Some(channel);
                ctx.record(TraceEvent::Blocked {
                    subtask: self.id,
                    channel,
                });
                return false;
            }
            self.pending_out.pop_front();
            ctx.push(channel, element);
        }
        true
    }

    /// The source ran out of records, or every input channel delivered EndOfPartition: the
    /// operator emits what it kept for the end (keyed totals), then EndOfPartition follows on
    /// every output channel.
    fn end_of_input(&mut self, ctx: &mut Ctx<'_, '_>) {
        ctx.record(TraceEvent::EndOfInput { subtask: self.id });
        for record in self.operator.end_of_input(self.id) {
            self.emit(ctx, record);
        }
        for gate in &ctx.graph.subtasks[self.id.index()].outputs {
            for &channel in &gate.channels {
                self.pending_out
                    .push_back((channel, Element::EndOfPartition));
            }
        }
        self.phase = Phase::Draining;
    }

    /// Everything is on the wire: the task is FINISHED and tells the JobMaster.
    fn finish(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.phase = Phase::Finished;
        self.set_state(ctx, ExecutionState::Finished);
    }

    /// Changes the task's own state and, from INITIALIZING on, reports it to the JobMaster
    /// through the TaskManager (Flink's `updateTaskExecutionState`).
    fn set_state(&mut self, ctx: &mut Ctx<'_, '_>, to: ExecutionState) {
        let from = std::mem::replace(&mut self.state, to);
        ctx.record(TraceEvent::TaskState {
            subtask: self.id,
            attempt: self.attempt,
            from,
            to,
        });
        if to != ExecutionState::Deploying {
            ctx.send(
                Address::TaskManager(self.task_manager),
                Address::JobMaster,
                Rpc::UpdateTaskExecutionState {
                    subtask: self.id,
                    attempt: self.attempt,
                    state: to,
                },
            );
        }
    }
}
