//! What happened in a run, as a sequence of typed events: the single source for the trace hash,
//! the oracles and every rendering (timeline, JSON Lines).
//!
//! Events are small `Copy` values with ids, not strings: recording one costs a few hash steps
//! and, when an output was asked for, one `Vec` push. Names (`map[0]`, `src[0]->map[0]`) are
//! only produced when something is rendered (`crate::report`).

use crate::graph::{ChannelId, SubtaskId};
use crate::record::Element;
use crate::status::{ExecutionState, JobStatus};
use sim::{Instant, TraceHasher};

/// Who sends and receives RPCs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Address {
    JobMaster,
    TaskManager(u32),
}

/// An RPC's payload. Data never travels by RPC, only through channels.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rpc {
    /// JobMaster → TaskManager: deploy attempt `attempt` of `subtask` into its slot.
    SubmitTask { subtask: SubtaskId, attempt: u32 },
    /// TaskManager → JobMaster: a task's state changed (Flink's `updateTaskExecutionState`).
    UpdateTaskExecutionState {
        subtask: SubtaskId,
        attempt: u32,
        state: ExecutionState,
    },
}

/// One thing that happened. Names are low-cardinality; ids are fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TraceEvent {
    /// The JobMaster changed the job's status.
    JobStatus { from: JobStatus, to: JobStatus },
    /// The JobMaster's view of an execution changed (it lags the task by RPC latency).
    ExecutionState {
        subtask: SubtaskId,
        attempt: u32,
        from: ExecutionState,
        to: ExecutionState,
    },
    /// A task's own state changed, on its TaskManager.
    TaskState {
        subtask: SubtaskId,
        attempt: u32,
        from: ExecutionState,
        to: ExecutionState,
    },
    /// An RPC reached its destination.
    Rpc {
        from: Address,
        to: Address,
        sent_at: Instant,
        rpc: Rpc,
    },
    /// A producer put an element into a channel.
    Push {
        channel: ChannelId,
        element: Element,
    },
    /// The oldest in-flight element of a channel reached the consumer's input buffer.
    Arrive {
        channel: ChannelId,
        element: Element,
    },
    /// A consumer dequeued an element from an input channel and processed it.
    Take {
        subtask: SubtaskId,
        channel: ChannelId,
        element: Element,
    },
    /// A producer found an output channel full and waits for credit (back-pressure).
    Blocked {
        subtask: SubtaskId,
        channel: ChannelId,
    },
    /// A task reached the end of its input: a source ran out of records, or every input
    /// channel delivered EndOfPartition.
    EndOfInput { subtask: SubtaskId },
}

impl TraceEvent {
    /// The event's `"type"` in JSON Lines and its tag in the hash.
    pub fn kind(&self) -> &'static str {
        match self {
            TraceEvent::JobStatus { .. } => "job_status",
            TraceEvent::ExecutionState { .. } => "execution_state",
            TraceEvent::TaskState { .. } => "task_state",
            TraceEvent::Rpc { .. } => "rpc",
            TraceEvent::Push { .. } => "push",
            TraceEvent::Arrive { .. } => "arrive",
            TraceEvent::Take { .. } => "take",
            TraceEvent::Blocked { .. } => "blocked",
            TraceEvent::EndOfInput { .. } => "end_of_input",
        }
    }

    /// Record-level events (one per record per hop) as opposed to protocol-level ones; the
    /// default timeline hides them.
    pub fn is_data(&self) -> bool {
        match self {
            TraceEvent::Push { element, .. }
            | TraceEvent::Arrive { element, .. }
            | TraceEvent::Take { element, .. } => matches!(element, Element::Record(_)),
            TraceEvent::Blocked { .. } => true,
            TraceEvent::JobStatus { .. }
            | TraceEvent::ExecutionState { .. }
            | TraceEvent::TaskState { .. }
            | TraceEvent::Rpc { .. }
            | TraceEvent::EndOfInput { .. } => false,
        }
    }

    /// Feeds the event into the trace hash as a fixed sequence of 64-bit words: a tag, then
    /// every field in declaration order. Changing this changes every recorded hash, so it is
    /// part of the trace format (`FORMAT_VERSION`).
    fn hash_into(&self, h: &mut TraceHasher) {
        match *self {
            TraceEvent::JobStatus { from, to } => {
                h.write_u64(1);
                h.write_u64(from as u64);
                h.write_u64(to as u64);
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            } => {
                h.write_u64(2);
                hash_state_change(h, subtask, attempt, from, to);
            }
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } => {
                h.write_u64(3);
                hash_state_change(h, subtask, attempt, from, to);
            }
            TraceEvent::Rpc {
                from,
                to,
                sent_at,
                rpc,
            } => {
                h.write_u64(4);
                hash_address(h, from);
                hash_address(h, to);
                h.write_u64(sent_at.as_nanos());
                match rpc {
                    Rpc::SubmitTask { subtask, attempt } => {
                        h.write_u64(1);
                        h.write_u64(u64::from(subtask.0));
                        h.write_u64(u64::from(attempt));
                    }
                    Rpc::UpdateTaskExecutionState {
                        subtask,
                        attempt,
                        state,
                    } => {
                        h.write_u64(2);
                        h.write_u64(u64::from(subtask.0));
                        h.write_u64(u64::from(attempt));
                        h.write_u64(state as u64);
                    }
                }
            }
            TraceEvent::Push { channel, element } => {
                h.write_u64(5);
                h.write_u64(u64::from(channel.0));
                hash_element(h, element);
            }
            TraceEvent::Arrive { channel, element } => {
                h.write_u64(6);
                h.write_u64(u64::from(channel.0));
                hash_element(h, element);
            }
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } => {
                h.write_u64(7);
                h.write_u64(u64::from(subtask.0));
                h.write_u64(u64::from(channel.0));
                hash_element(h, element);
            }
            TraceEvent::Blocked { subtask, channel } => {
                h.write_u64(8);
                h.write_u64(u64::from(subtask.0));
                h.write_u64(u64::from(channel.0));
            }
            TraceEvent::EndOfInput { subtask } => {
                h.write_u64(9);
                h.write_u64(u64::from(subtask.0));
            }
        }
    }
}

fn hash_state_change(
    h: &mut TraceHasher,
    subtask: SubtaskId,
    attempt: u32,
    from: ExecutionState,
    to: ExecutionState,
) {
    h.write_u64(u64::from(subtask.0));
    h.write_u64(u64::from(attempt));
    h.write_u64(from as u64);
    h.write_u64(to as u64);
}

fn hash_address(h: &mut TraceHasher, address: Address) {
    h.write_u64(match address {
        Address::JobMaster => u64::MAX,
        Address::TaskManager(i) => u64::from(i),
    });
}

fn hash_element(h: &mut TraceHasher, element: Element) {
    match element {
        Element::Record(r) => {
            h.write_u64(1);
            h.write_u64(u64::from(r.origin.0));
            h.write_u64(u64::from(r.key));
            h.write_u64(r.seq);
            h.write_i64(r.value);
        }
        Element::EndOfPartition => h.write_u64(2),
    }
}

/// Version of the trace format: the JSON Lines layout and the hash input. Bumped whenever either
/// changes, so an old trace is never compared against a new run as if they matched.
pub const FORMAT_VERSION: u32 = 1;

/// Which events a run keeps in memory for rendering after it ends. Hashing and the oracles see
/// every event regardless.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Retain {
    Nothing,
    /// Everything but record-level events (the default timeline).
    Protocol,
    Everything,
}

/// The running trace: a count, a hash and, when asked, the events themselves.
pub struct Trace {
    hasher: TraceHasher,
    count: u64,
    retain: Retain,
    kept: Vec<(u64, Instant, TraceEvent)>,
}

impl Trace {
    pub fn new(retain: Retain) -> Trace {
        Trace {
            hasher: TraceHasher::new(),
            count: 0,
            retain,
            kept: Vec::new(),
        }
    }

    /// Appends an event and returns its index (the `event_index` violations refer to).
    #[inline]
    pub fn record(&mut self, now: Instant, event: TraceEvent) -> u64 {
        let index = self.count;
        self.count += 1;
        self.hasher.write_u64(now.as_nanos());
        event.hash_into(&mut self.hasher);
        let keep = match self.retain {
            Retain::Nothing => false,
            Retain::Protocol => !event.is_data(),
            Retain::Everything => true,
        };
        if keep {
            self.kept.push((index, now, event));
        }
        index
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn hash(&self) -> u64 {
        self.hasher.finish()
    }

    /// The retained events with their indices, in order.
    pub fn kept(&self) -> &[(u64, Instant, TraceEvent)] {
        &self.kept
    }
}
