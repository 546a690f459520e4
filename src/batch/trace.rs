//! The trace events only batch runs record (P2), carried by `TraceEvent::Batch`. Like every
//! trace event they are small `Copy` values with ids; names appear only when rendered.

use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use serde_json::{json, Value};
use sim::TraceHasher;

/// Why a subtask that already ran must run again (the summary's "re-run and why", P2.4/P2.5).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum RerunReason {
    /// Its finished event never reached durable storage (or it finished as the JobManager
    /// died, so no event was written).
    EventLost,
    /// Its finished event was durable but no snapshot followed it (F2.3).
    NoSnapshot,
    /// A partition it produced is still needed and was not reported in time (P2.4 step 4).
    PartitionMissing,
    /// Its coordinator has no batch snapshot (P2.5), or returned its splits (P2.4 step 3).
    CoordinatorRule,
    /// It consumed a partition whose producer runs again (P2.4 step 4, region failover).
    DownstreamOfReset,
    /// A task failure or a lost TaskManager, outside recovery.
    Failover,
    /// Recovery is off or found nothing to replay: everything runs again (P2.6).
    FullRestart,
}

impl RerunReason {
    pub const ALL: [RerunReason; 7] = [
        RerunReason::EventLost,
        RerunReason::NoSnapshot,
        RerunReason::PartitionMissing,
        RerunReason::CoordinatorRule,
        RerunReason::DownstreamOfReset,
        RerunReason::Failover,
        RerunReason::FullRestart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RerunReason::EventLost => "event_lost",
            RerunReason::NoSnapshot => "no_snapshot",
            RerunReason::PartitionMissing => "partition_missing",
            RerunReason::CoordinatorRule => "coordinator_rule",
            RerunReason::DownstreamOfReset => "downstream_of_reset",
            RerunReason::Failover => "failover",
            RerunReason::FullRestart => "full_restart",
        }
    }

    pub fn rule(self) -> &'static str {
        match self {
            RerunReason::EventLost => "P2.2",
            RerunReason::NoSnapshot => "F2.3",
            RerunReason::PartitionMissing => "P2.4 step 4",
            RerunReason::CoordinatorRule => "P2.5",
            RerunReason::DownstreamOfReset => "P2.4 step 4",
            RerunReason::Failover => "P2.1",
            RerunReason::FullRestart => "P2.6",
        }
    }
}

/// Why the write buffer was flushed (P2.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlushReason {
    Interval,
    BufferFull,
    VertexFinished,
}

impl FlushReason {
    fn name(self) -> &'static str {
        match self {
            FlushReason::Interval => "flush_interval",
            FlushReason::BufferFull => "buffer_full",
            FlushReason::VertexFinished => "vertex_finished",
        }
    }
}

/// Which job event was appended to the write buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Logged {
    VertexInitialized(VertexId),
    Finished(SubtaskId),
    /// A reset of this many execution vertices.
    Reset(u32),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BatchEvent {
    /// The JobMaster initialized a vertex: its inputs finished (P2.1), with this parallelism,
    /// decided from `input_bytes` when `adaptive`, or replayed from the job events.
    VertexInitialized {
        vertex: VertexId,
        parallelism: u32,
        input_bytes: u64,
        adaptive: bool,
    },
    /// The split enumerator answered a split request (`None`: no split left).
    SplitAssigned {
        subtask: SubtaskId,
        attempt: u32,
        split: Option<u32>,
    },
    /// A producer wrote its whole result partition.
    PartitionWritten {
        subtask: SubtaskId,
        attempt: u32,
        bytes: u64,
        remote: bool,
    },
    /// The JobMaster appended an event to the job event store's write buffer.
    JobEventLogged {
        what: Logged,
        snapshot: bool,
    },
    /// The write buffer reached durable storage.
    JobEventsFlushed {
        events: u32,
        reason: FlushReason,
    },
    /// The JobMaster died with these events still unflushed.
    JobEventsLost {
        events: u32,
    },
    /// A new JobMaster replayed `replayed` durable events (`discarded` trailing finished ones
    /// without a snapshot); `full_restart`: recovery is off or there was nothing to replay.
    RecoveryStarted {
        replayed: u32,
        discarded: u32,
        full_restart: bool,
    },
    /// A TaskManager reported a partition it kept; `late`: after the wait (F2.4).
    PartitionReported {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
        late: bool,
    },
    /// P3.3: a reconciling JobMaster refused a task's RPC; its TaskManager keeps it.
    RpcRefused {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
    },
    /// The JobMaster asks a TaskManager to release a partition.
    ReleaseRequested {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
    },
    /// A partition was released (dropped by its holder).
    PartitionReleased {
        subtask: SubtaskId,
        attempt: u32,
        remote: bool,
    },
    /// A subtask that had already run is reset to run again.
    SubtaskReset {
        subtask: SubtaskId,
        reason: RerunReason,
    },
    /// Recovery is over (P2.4): `recovered` subtasks kept as finished; the wait for reports
    /// ended by `previous_worker_timeout` when `timed_out`.
    RecoveryEnded {
        recovered: u32,
        rerun: u32,
        timed_out: bool,
    },
    /// A consumer could not read `producer`'s partition.
    PartitionNotFound {
        subtask: SubtaskId,
        producer: SubtaskId,
    },
    /// A TaskManager lost / regained its connection to the JobManager.
    TaskManagerDisconnected {
        task_manager: u32,
    },
    TaskManagerReconnected {
        task_manager: u32,
    },
    /// The JobMaster deploys an attempt to a TaskManager, into one of its slots.
    Deployed {
        subtask: SubtaskId,
        attempt: u32,
        task_manager: u32,
    },
    /// The job finished: a sink subtask's output is committed.
    OutputCommitted {
        subtask: SubtaskId,
        records: u64,
    },
}

impl BatchEvent {
    pub fn kind(&self) -> &'static str {
        match self {
            BatchEvent::VertexInitialized { .. } => "vertex_initialized",
            BatchEvent::SplitAssigned { .. } => "split_assigned",
            BatchEvent::PartitionWritten { .. } => "partition_written",
            BatchEvent::JobEventLogged { .. } => "job_event_logged",
            BatchEvent::JobEventsFlushed { .. } => "job_events_flushed",
            BatchEvent::JobEventsLost { .. } => "job_events_lost",
            BatchEvent::RecoveryStarted { .. } => "recovery_started",
            BatchEvent::PartitionReported { .. } => "partition_reported",
            BatchEvent::ReleaseRequested { .. } => "release_requested",
            BatchEvent::RpcRefused { .. } => "batch_rpc_refused",
            BatchEvent::PartitionReleased { .. } => "partition_released",
            BatchEvent::SubtaskReset { .. } => "subtask_reset",
            BatchEvent::RecoveryEnded { .. } => "recovery_ended",
            BatchEvent::PartitionNotFound { .. } => "partition_not_found",
            BatchEvent::TaskManagerDisconnected { .. } => "taskmanager_disconnected",
            BatchEvent::TaskManagerReconnected { .. } => "taskmanager_reconnected",
            BatchEvent::OutputCommitted { .. } => "output_committed",
            BatchEvent::Deployed { .. } => "deployed",
        }
    }

    /// Fixed words per event, like `TraceEvent::hash_into` (tags from 100 on).
    pub fn hash_into(&self, h: &mut TraceHasher) {
        let opt = |x: Option<u32>| x.map_or(u64::MAX, u64::from);
        let id = |s: SubtaskId| u64::from(s.0);
        let words: [u64; 5] = match *self {
            BatchEvent::VertexInitialized {
                vertex,
                parallelism,
                input_bytes,
                adaptive,
            } => [
                100,
                u64::from(vertex.0),
                u64::from(parallelism),
                input_bytes,
                u64::from(adaptive),
            ],
            BatchEvent::SplitAssigned {
                subtask,
                attempt,
                split,
            } => [101, id(subtask), u64::from(attempt), opt(split), 0],
            BatchEvent::PartitionWritten {
                subtask,
                attempt,
                bytes,
                remote,
            } => [
                102,
                id(subtask),
                u64::from(attempt),
                bytes,
                u64::from(remote),
            ],
            BatchEvent::JobEventLogged { what, snapshot } => {
                let (tag, x) = match what {
                    Logged::VertexInitialized(v) => (0, u64::from(v.0)),
                    Logged::Finished(s) => (1, id(s)),
                    Logged::Reset(n) => (2, u64::from(n)),
                };
                [103, tag, x, u64::from(snapshot), 0]
            }
            BatchEvent::JobEventsFlushed { events, reason } => {
                [104, u64::from(events), reason as u64, 0, 0]
            }
            BatchEvent::JobEventsLost { events } => [105, u64::from(events), 0, 0, 0],
            BatchEvent::RecoveryStarted {
                replayed,
                discarded,
                full_restart,
            } => [
                106,
                u64::from(replayed),
                u64::from(discarded),
                u64::from(full_restart),
                0,
            ],
            BatchEvent::PartitionReported {
                task_manager,
                subtask,
                attempt,
                late,
            } => [
                107,
                u64::from(task_manager),
                id(subtask),
                u64::from(attempt),
                u64::from(late),
            ],
            BatchEvent::PartitionReleased {
                subtask,
                attempt,
                remote,
            } => [108, id(subtask), u64::from(attempt), u64::from(remote), 0],
            BatchEvent::ReleaseRequested {
                task_manager,
                subtask,
                attempt,
            } => [
                115,
                u64::from(task_manager),
                id(subtask),
                u64::from(attempt),
                0,
            ],
            BatchEvent::RpcRefused {
                task_manager,
                subtask,
                attempt,
            } => [
                116,
                u64::from(task_manager),
                id(subtask),
                u64::from(attempt),
                0,
            ],
            BatchEvent::SubtaskReset { subtask, reason } => [109, id(subtask), reason as u64, 0, 0],
            BatchEvent::RecoveryEnded {
                recovered,
                rerun,
                timed_out,
            } => [
                110,
                u64::from(recovered),
                u64::from(rerun),
                u64::from(timed_out),
                0,
            ],
            BatchEvent::PartitionNotFound { subtask, producer } => {
                [111, id(subtask), id(producer), 0, 0]
            }
            BatchEvent::TaskManagerDisconnected { task_manager } => {
                [112, u64::from(task_manager), 0, 0, 0]
            }
            BatchEvent::TaskManagerReconnected { task_manager } => {
                [113, u64::from(task_manager), 0, 0, 0]
            }
            BatchEvent::OutputCommitted { subtask, records } => [114, id(subtask), records, 0, 0],
            BatchEvent::Deployed {
                subtask,
                attempt,
                task_manager,
            } => [
                117,
                id(subtask),
                u64::from(attempt),
                u64::from(task_manager),
                0,
            ],
        };
        for w in words {
            h.write_u64(w);
        }
    }

    /// The actor and a sentence, for the timeline.
    pub fn line(&self, graph: &ExecutionGraph) -> (String, String) {
        let name = |s: SubtaskId| graph.subtask_name(s).to_string();
        let jm = || "JobMaster".to_owned();
        match *self {
            BatchEvent::VertexInitialized {
                vertex,
                parallelism,
                input_bytes,
                adaptive,
            } => (
                jm(),
                format!(
                    "initializes {} with parallelism {parallelism}{} (P2.1)",
                    graph.vertices[vertex.index()].name,
                    if adaptive {
                        format!(", decided from {input_bytes} input bytes")
                    } else {
                        String::new()
                    }
                ),
            ),
            BatchEvent::SplitAssigned { subtask, split, .. } => (
                name(subtask),
                match split {
                    Some(s) => format!("is assigned split {s}"),
                    None => "learns that no split is left".to_owned(),
                },
            ),
            BatchEvent::PartitionWritten {
                subtask,
                bytes,
                remote,
                ..
            } => (
                name(subtask),
                format!(
                    "wrote its result partition, {bytes} bytes, {}",
                    if remote {
                        "to the remote shuffle service"
                    } else {
                        "on its TaskManager"
                    }
                ),
            ),
            BatchEvent::JobEventLogged { what, snapshot } => (
                jm(),
                format!(
                    "logs {}{} (P2.2)",
                    match what {
                        Logged::VertexInitialized(v) =>
                            format!("vertex initialized {}", graph.vertices[v.index()].name),
                        Logged::Finished(s) => format!("execution vertex finished {}", name(s)),
                        Logged::Reset(n) => format!("execution vertex reset ({n} subtasks)"),
                    },
                    if snapshot {
                        " with coordinator and shuffle snapshots"
                    } else {
                        ""
                    }
                ),
            ),
            BatchEvent::JobEventsFlushed { events, reason } => (
                jm(),
                format!(
                    "flushes {events} job events to durable storage ({})",
                    reason.name()
                ),
            ),
            BatchEvent::JobEventsLost { events } => (
                jm(),
                format!("dies with {events} unflushed job events: they are lost (P2.2)"),
            ),
            BatchEvent::RecoveryStarted {
                replayed,
                discarded,
                full_restart,
            } => (
                jm(),
                if full_restart {
                    "has nothing to recover from: the job restarts from scratch (P2.6)".to_owned()
                } else {
                    format!(
                        "RECONCILING: replays {replayed} job events, discards {discarded} \
                         trailing finished events without a snapshot (P2.4, F2.3)"
                    )
                },
            ),
            BatchEvent::PartitionReported {
                task_manager,
                subtask,
                late,
                ..
            } => (
                format!("TaskManager-{task_manager}"),
                format!(
                    "reports the partition of {}{}",
                    name(subtask),
                    if late {
                        ": too late, released (F2.4)"
                    } else {
                        ""
                    }
                ),
            ),
            BatchEvent::Deployed {
                subtask,
                attempt,
                task_manager,
            } => (
                jm(),
                format!(
                    "deploys {} attempt {attempt} to TaskManager-{task_manager}",
                    name(subtask)
                ),
            ),
            BatchEvent::RpcRefused {
                task_manager,
                subtask,
                ..
            } => (
                jm(),
                format!(
                    "refuses an RPC of {} from TaskManager-{task_manager}: RECONCILING; it is kept and sent again (P3.3)",
                    name(subtask)
                ),
            ),
            BatchEvent::ReleaseRequested {
                task_manager,
                subtask,
                ..
            } => (
                jm(),
                format!(
                    "asks TaskManager-{task_manager} to release the partition of {}",
                    name(subtask)
                ),
            ),
            BatchEvent::PartitionReleased {
                subtask, remote, ..
            } => (
                if remote {
                    "ShuffleService".to_owned()
                } else {
                    "TaskManager".to_owned()
                },
                format!("releases the partition of {}", name(subtask)),
            ),
            BatchEvent::SubtaskReset { subtask, reason } => (
                jm(),
                format!(
                    "resets {} to run again: {} ({})",
                    name(subtask),
                    reason.name(),
                    reason.rule()
                ),
            ),
            BatchEvent::RecoveryEnded {
                recovered,
                rerun,
                timed_out,
            } => (
                jm(),
                format!(
                    "RUNNING: {recovered} subtasks recovered as finished, {rerun} to run again{} \
                     (P2.4)",
                    if timed_out {
                        "; stopped waiting at previous_worker_timeout"
                    } else {
                        ""
                    }
                ),
            ),
            BatchEvent::PartitionNotFound { subtask, producer } => (
                name(subtask),
                format!("PartitionNotFound: the partition of {}", name(producer)),
            ),
            BatchEvent::TaskManagerDisconnected { task_manager } => (
                format!("TaskManager-{task_manager}"),
                "loses its connection to the JobManager".to_owned(),
            ),
            BatchEvent::TaskManagerReconnected { task_manager } => (
                format!("TaskManager-{task_manager}"),
                "is reachable again".to_owned(),
            ),
            BatchEvent::OutputCommitted { subtask, records } => (
                name(subtask),
                format!("output committed: {records} records"),
            ),
        }
    }

    /// The event's fields for JSON Lines.
    pub fn json(&self, graph: &ExecutionGraph) -> Value {
        let name = |s: SubtaskId| graph.subtask_name(s).to_string();
        match *self {
            BatchEvent::VertexInitialized {
                vertex,
                parallelism,
                input_bytes,
                adaptive,
            } => json!({"vertex": graph.vertices[vertex.index()].name, "parallelism": parallelism,
                        "input_bytes": input_bytes, "adaptive": adaptive}),
            BatchEvent::SplitAssigned {
                subtask,
                attempt,
                split,
            } => json!({"task": name(subtask), "attempt": attempt, "split": split}),
            BatchEvent::PartitionWritten {
                subtask,
                attempt,
                bytes,
                remote,
            } => {
                json!({"task": name(subtask), "attempt": attempt, "bytes": bytes, "remote": remote})
            }
            BatchEvent::JobEventLogged { what, snapshot } => match what {
                Logged::VertexInitialized(v) => json!({"event": "vertex_initialized",
                    "vertex": graph.vertices[v.index()].name, "snapshot": snapshot}),
                Logged::Finished(s) => {
                    json!({"event": "finished", "task": name(s), "snapshot": snapshot})
                }
                Logged::Reset(n) => json!({"event": "reset", "subtasks": n, "snapshot": snapshot}),
            },
            BatchEvent::JobEventsFlushed { events, reason } => {
                json!({"events": events, "reason": reason.name()})
            }
            BatchEvent::JobEventsLost { events } => json!({"events": events}),
            BatchEvent::RecoveryStarted {
                replayed,
                discarded,
                full_restart,
            } => {
                json!({"replayed": replayed, "discarded": discarded, "full_restart": full_restart})
            }
            BatchEvent::PartitionReported {
                task_manager,
                subtask,
                attempt,
                late,
            } => {
                json!({"task_manager": task_manager, "task": name(subtask), "attempt": attempt, "late": late})
            }
            BatchEvent::PartitionReleased {
                subtask,
                attempt,
                remote,
            } => json!({"task": name(subtask), "attempt": attempt, "remote": remote}),
            BatchEvent::ReleaseRequested {
                task_manager,
                subtask,
                attempt,
            }
            | BatchEvent::RpcRefused {
                task_manager,
                subtask,
                attempt,
            }
            | BatchEvent::Deployed {
                subtask,
                attempt,
                task_manager,
            } => json!({"task_manager": task_manager, "task": name(subtask), "attempt": attempt}),
            BatchEvent::SubtaskReset { subtask, reason } => {
                json!({"task": name(subtask), "reason": reason.name()})
            }
            BatchEvent::RecoveryEnded {
                recovered,
                rerun,
                timed_out,
            } => json!({"recovered": recovered, "rerun": rerun, "timed_out": timed_out}),
            BatchEvent::PartitionNotFound { subtask, producer } => {
                json!({"task": name(subtask), "producer": name(producer)})
            }
            BatchEvent::TaskManagerDisconnected { task_manager }
            | BatchEvent::TaskManagerReconnected { task_manager } => {
                json!({"task_manager": task_manager})
            }
            BatchEvent::OutputCommitted { subtask, records } => {
                json!({"task": name(subtask), "records": records})
            }
        }
    }
}
