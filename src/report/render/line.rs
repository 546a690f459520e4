//! One trace event as a line of the timeline: the actor and a sentence.

use super::{address, element_text, fault_text, record_text, rpc_text};
use crate::graph::ExecutionGraph;
use crate::trace::{Logged, TraceEvent};

/// `(actor, what happened)` for the timeline.
pub fn event_line(graph: &ExecutionGraph, event: &TraceEvent) -> (String, String) {
    let name = |s| graph.subtask_name(s).to_string();
    let channel = |c| graph.channel_name(c).to_string();
    let jm = || "JobMaster".to_owned();
    const CC: &str = "Checkpointing";
    match event {
        TraceEvent::JobStatus { from, to } => ("JobMaster".into(), format!("job {from} → {to}")),
        TraceEvent::ExecutionState {
            subtask,
            attempt,
            from,
            to,
        } => (
            "JobMaster".into(),
            format!("sees {} attempt {attempt}: {from} → {to}", name(*subtask)),
        ),
        TraceEvent::TaskState {
            subtask,
            attempt,
            from,
            to,
        } => (name(*subtask), format!("attempt {attempt}: {from} → {to}")),
        TraceEvent::Rpc {
            from,
            to,
            sent_at,
            rpc,
        } => (
            address(*to),
            format!(
                "received {} from {} (sent at {sent_at})",
                rpc_text(graph, rpc),
                address(*from)
            ),
        ),
        TraceEvent::Push {
            channel: c,
            element,
        } => {
            let from = graph.channels[c.index()].from;
            (
                name(from),
                format!("sent {} on {}", element_text(graph, element), channel(*c)),
            )
        }
        TraceEvent::Arrive {
            channel: c,
            element,
        } => {
            let to = graph.channels[c.index()].to;
            (
                name(to),
                format!(
                    "{} arrived on {}",
                    element_text(graph, element),
                    channel(*c)
                ),
            )
        }
        TraceEvent::Take {
            subtask,
            channel: c,
            element,
        } => (
            name(*subtask),
            format!("took {} from {}", element_text(graph, element), channel(*c)),
        ),
        TraceEvent::BufferSent {
            channel: c,
            records,
            ..
        } => (
            name(graph.channels[c.index()].from),
            format!("sent a buffer of {records} records on {}", channel(*c)),
        ),
        TraceEvent::BufferArrived {
            channel: c,
            records,
        } => (
            name(graph.channels[c.index()].to),
            format!("a buffer of {records} records arrived on {}", channel(*c)),
        ),
        TraceEvent::BufferTaken {
            subtask,
            channel: c,
            records,
            ..
        } => (
            name(*subtask),
            format!("took a buffer's {records} records from {}", channel(*c)),
        ),
        TraceEvent::Blocked {
            subtask,
            channel: c,
        } => (
            name(*subtask),
            format!(
                "back-pressured: {} is full, waiting for credit",
                channel(*c)
            ),
        ),
        TraceEvent::EndOfInput { subtask } => {
            (name(*subtask), "reached the end of its input".into())
        }
        TraceEvent::CheckpointTriggered { checkpoint } => {
            (CC.into(), format!("triggered checkpoint {checkpoint}"))
        }
        TraceEvent::CheckpointNotTriggered { reason } => (
            CC.into(),
            format!("did not trigger a checkpoint: {}", reason.id()),
        ),
        TraceEvent::CheckpointSeen {
            subtask,
            checkpoint,
            by_trigger,
        } => (
            name(*subtask),
            format!(
                "learned of checkpoint {checkpoint} by {}",
                if *by_trigger {
                    "trigger RPC"
                } else {
                    "barrier"
                }
            ),
        ),
        TraceEvent::BarrierInserted {
            subtask,
            channel: c,
            checkpoint,
        } => (
            name(*subtask),
            format!(
                "inserted barrier {checkpoint} before EndOfPartition on {} (P1.3)",
                channel(*c)
            ),
        ),
        TraceEvent::AlignmentDone {
            subtask,
            checkpoint,
            alignment,
        } => (
            name(*subtask),
            format!("aligned checkpoint {checkpoint} in {alignment}"),
        ),
        TraceEvent::SnapshotUploaded {
            subtask,
            checkpoint,
            ..
        } => (
            name(*subtask),
            format!("finished the asynchronous part of its snapshot for checkpoint {checkpoint}: state durable, acknowledged"),
        ),
        TraceEvent::BarriersCounted {
            subtask,
            checkpoint,
            waited,
            past_barrier,
        } => (
            name(*subtask),
            format!(
                "counted every barrier of checkpoint {checkpoint} in {waited}, blocking nothing ({past_barrier} records taken past a barrier)"
            ),
        ),
        TraceEvent::Snapshot {
            subtask,
            checkpoint,
            finished,
            ..
        } => (
            name(*subtask),
            format!(
                "snapshot for checkpoint {checkpoint}{}",
                if *finished {
                    " (final: after end of input)"
                } else {
                    ""
                }
            ),
        ),
        TraceEvent::Retrigger {
            checkpoint,
            finished,
            descendant,
        } => (
            CC.into(),
            format!(
                "re-triggers {} for checkpoint {checkpoint}: its input {} had finished (option1)",
                name(*descendant),
                name(*finished)
            ),
        ),
        TraceEvent::CheckpointCompleted { checkpoint } => {
            (CC.into(), format!("checkpoint {checkpoint} COMPLETED"))
        }
        TraceEvent::CheckpointAborted { checkpoint, reason } => (
            CC.into(),
            format!("checkpoint {checkpoint} ABORTED: {}", reason.id()),
        ),
        TraceEvent::CheckpointFailuresExceeded {
            checkpoint,
            failures,
        } => (
            CC.into(),
            format!("{failures} checkpoint failures in a row (the last: {checkpoint}): more than tolerable_failures, the job fails over (F1.9)"),
        ),
        TraceEvent::ChainedSink { subtask, record } => (
            name(*subtask),
            format!(
                "its chained sink wrote out {}",
                record_text(graph, record)
            ),
        ),
        TraceEvent::Commit {
            subtask,
            checkpoint,
            record,
        } => (
            name(*subtask),
            format!(
                "committed {} (transaction of checkpoint {checkpoint})",
                record_text(graph, record)
            ),
        ),
        TraceEvent::TransactionCommitted {
            subtask,
            checkpoint,
            records,
            ..
        } => (
            name(*subtask),
            format!("committed the transaction of checkpoint {checkpoint}: {records} records"),
        ),
        TraceEvent::AllRecordsProcessed { channel: c } => {
            let from = graph.channels[c.index()].from;
            (
                name(from),
                format!("consumer processed all records on {}", channel(*c)),
            )
        }
        TraceEvent::ChannelReleased { channel: c, arrivals } => (
            "Faults".into(),
            format!(
                "channel {} is released: {arrivals} held elements arrive",
                channel(*c)
            ),
        ),
        TraceEvent::SavepointTriggered { checkpoint, drain } => (
            CC.into(),
            format!(
                "checkpoint {checkpoint} is a synchronous savepoint that stops the job ({}) (F1.11)",
                if *drain { "drain" } else { "no drain" }
            ),
        ),
        TraceEvent::SavepointRefused { reason } => (
            CC.into(),
            format!("stop-with-savepoint REFUSED: {}", reason.id()),
        ),
        TraceEvent::SourceStopped {
            subtask,
            checkpoint,
            drain,
            ..
        } => (
            name(*subtask),
            format!(
                "source stopped for savepoint {checkpoint} ({})",
                if *drain { "drain" } else { "no drain" }
            ),
        ),
        TraceEvent::SavepointFailed { checkpoint: 0 } => (
            CC.into(),
            "stop-with-savepoint FAILED before a savepoint was triggered: periodic checkpoints resume"
                .to_owned(),
        ),
        TraceEvent::SavepointFailed { checkpoint } => (
            CC.into(),
            format!("stop-with-savepoint FAILED: savepoint {checkpoint} aborted, periodic checkpoints resume"),
        ),
        TraceEvent::FaultFired { index, fault } => (
            "Faults".into(),
            format!("fault {index} fires: {}", fault_text(graph, fault)),
        ),
        TraceEvent::Failover {
            cause,
            restarting,
            full,
        } => (
            "JobMaster".into(),
            format!(
                "FAILOVER: {} failed; cancelling {} {restarting} subtasks (P1.8)",
                cause.map_or("too many checkpoint failures: the job".to_owned(), name),
                if *full {
                    "the whole job:"
                } else {
                    "its pipelined region:"
                }
            ),
        ),
        TraceEvent::Restore {
            checkpoint,
            restarted,
            finished,
            ..
        } => (
            "JobMaster".into(),
            if *checkpoint == 0 {
                format!("RESTORE: no completed checkpoint; {restarted} subtasks start from scratch")
            } else {
                format!(
                    "RESTORE from checkpoint {checkpoint}: {restarted} subtasks redeployed, {finished} of them finished on restore (F1.6)"
                )
            },
        ),
        TraceEvent::JobMasterLost { incarnation } => (
            "JobMaster".into(),
            format!("JOBMANAGER {incarnation} CRASHED: its volatile state is gone"),
        ),
        TraceEvent::JobMasterElected { incarnation } => (
            "JobMaster".into(),
            format!("JobManager {incarnation} elected: it takes the job over"),
        ),
        TraceEvent::TaskManagerLost { task_manager } => (
            format!("TaskManager{task_manager}"),
            "LOST: its tasks and the data it held are gone".into(),
        ),
        TraceEvent::TaskManagerStarted { task_manager } => (
            format!("TaskManager{task_manager}"),
            "a replacement process started and registered".into(),
        ),
        TraceEvent::TaskManagerTimedOut { task_manager } => (
            "JobMaster".into(),
            format!("heartbeat of TaskManager{task_manager} timed out: its executions failed"),
        ),
        TraceEvent::RestartsExhausted { failovers } => (
            "JobMaster".into(),
            format!("restart strategy exhausted after {failovers} failovers: the job fails"),
        ),
        TraceEvent::ChannelState {
            subtask,
            checkpoint,
            channel: c,
            records,
            output,
        } => (
            name(*subtask),
            format!(
                "persisted {records} in-flight records of {} as {} channel state of checkpoint {checkpoint} (P1.4)",
                channel(*c),
                if *output { "output" } else { "input" }
            ),
        ),
        TraceEvent::RestoreRejected { checkpoint } => (
            "JobMaster".into(),
            format!("refuses to restore checkpoint {checkpoint}: its finished subtasks have an impossible shape (F1.6); the job fails"),
        ),
        TraceEvent::RpcDropped {
            from,
            to,
            rpc,
            fenced,
        } => (
            address(*to),
            format!(
                "dropped {} from {}: {}",
                rpc_text(graph, rpc),
                address(*from),
                if *fenced {
                    "its JobMaster is no longer the leader"
                } else {
                    "the process it was sent to has died"
                }
            ),
        ),
        TraceEvent::RpcRefused { from, rpc } => (
            address(*from),
            format!(
                "keeps {}: no JobMaster took it (none elected, or reconciling); retries (P3.3)",
                rpc_text(graph, rpc)
            ),
        ),
        TraceEvent::ReconcileEnded {
            outcome,
            reported,
            missing,
        } => (
            "JobMaster".into(),
            format!(
                "RECONCILIATION ENDED: {reported} executions reported, {missing} TaskManager(s) missing: {} (P3.4)",
                match outcome {
                    crate::trace::ReconcileOutcome::Running => "RUNNING",
                    crate::trace::ReconcileOutcome::Finished => "FINISHED",
                    crate::trace::ReconcileOutcome::Failing => "FAILING, then failover",
                }
            ),
        ),
        TraceEvent::RpcLost { from, to, retry } => (
            address(*from),
            format!("an RPC to {} was lost; retried after {retry}", address(*to)),
        ),
        // ---- batch events (P2)
            &TraceEvent::VertexInitialized {
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
            &TraceEvent::SplitAssigned { subtask, split, .. } => (
                name(subtask),
                match split {
                    Some(s) => format!("is assigned split {s}"),
                    None => "learns that no split is left".to_owned(),
                },
            ),
            &TraceEvent::PartitionWritten {
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
            &TraceEvent::JobEventLogged { what, snapshot } => (
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
            &TraceEvent::JobEventsFlushed { events, reason } => (
                jm(),
                format!(
                    "flushes {events} job events to durable storage ({})",
                    reason.name()
                ),
            ),
            &TraceEvent::JobEventsLost { events } => (
                jm(),
                format!("dies with {events} unflushed job events: they are lost (P2.2)"),
            ),
            &TraceEvent::JobEventsWriteFailed { events } => (
                jm(),
                format!(
                    "cannot write to the job event store: {events} buffered job events are lost, \
                     and it logs nothing more (F2.3)"
                ),
            ),
            &TraceEvent::JobEventsUnreadable { events } => (
                jm(),
                format!(
                    "cannot read the {events} durable job events back: the log is deleted and \
                     the job restarts in full, every attempt new (F2.4 step 5)"
                ),
            ),
            &TraceEvent::RecoveryStarted {
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
            &TraceEvent::PartitionReported {
                task_manager,
                subtask,
                late,
                ..
            } => (
                format!("TaskManager{task_manager}"),
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
            &TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                speculative,
            } => (
                jm(),
                format!(
                    "deploys {} attempt {attempt} to TaskManager{task_manager}{}",
                    name(subtask),
                    if speculative {
                        ": a speculative attempt beside the slow one (P2.8)"
                    } else {
                        ""
                    }
                ),
            ),
            &TraceEvent::TaskRpcRefused {
                task_manager,
                subtask,
                ..
            } => (
                jm(),
                format!(
                    "refuses an RPC of {} from TaskManager{task_manager}: RECONCILING; it is kept and sent again (P3.3)",
                    name(subtask)
                ),
            ),
            &TraceEvent::ReleaseRequested {
                task_manager,
                subtask,
                ..
            } => (
                jm(),
                format!(
                    "asks TaskManager{task_manager} to release the partition of {}",
                    name(subtask)
                ),
            ),
            &TraceEvent::PartitionReleased {
                subtask, remote, ..
            } => (
                if remote {
                    "ShuffleService".to_owned()
                } else {
                    "TaskManager".to_owned()
                },
                format!("releases the partition of {}", name(subtask)),
            ),
            &TraceEvent::SubtaskReset { subtask, reason } => (
                jm(),
                format!(
                    "resets {} to run again: {} ({})",
                    name(subtask),
                    reason.name(),
                    reason.rule()
                ),
            ),
            &TraceEvent::RecoveryEnded {
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
            &TraceEvent::PartitionNotFound { subtask, producer } => (
                name(subtask),
                format!("PartitionNotFound: the partition of {}", name(producer)),
            ),
            &TraceEvent::TaskManagerDisconnected { task_manager } => (
                format!("TaskManager{task_manager}"),
                "loses its connection to the JobManager".to_owned(),
            ),
            &TraceEvent::TaskManagerReconnected { task_manager } => (
                format!("TaskManager{task_manager}"),
                "is reachable again".to_owned(),
            ),
            &TraceEvent::LeaderLost { task_manager } => (
                format!("TaskManager{task_manager}"),
                "stops trusting its JobManager (F2.5)".to_owned(),
            ),
            &TraceEvent::LeaderFound { task_manager } => (
                format!("TaskManager{task_manager}"),
                "finds the current JobManager and registers with it".to_owned(),
            ),
            TraceEvent::JobResultWritten => (
                "JobMaster".to_owned(),
                "the job's result is durable in HA storage: the job is over (P2.7)".to_owned(),
            ),
            TraceEvent::SpeculationChecked => (
                "JobMaster".to_owned(),
                "looks for slow tasks (P2.8)".to_owned(),
            ),
            &TraceEvent::OutputCommitted { subtask, records } => (
                name(subtask),
                format!("output committed: {records} records"),
            ),
    }
}
