//! One trace event as a JSON Lines object, names written as in scenarios.

use super::{address, call_parts, element_json, fault_text, record_json};
use crate::graph::ExecutionGraph;
use crate::trace::{Logged, TraceEvent};
use serde_json::{json, Value};
use sim::Instant;

/// The JSON Lines object of one event: `type`, `index`, `time` (human) and `time_ns`, then
/// the event's fields with names written as in scenarios.
pub fn event_json(graph: &ExecutionGraph, index: u64, time: Instant, event: &TraceEvent) -> Value {
    let name = |s| graph.subtask_name(s).to_string();
    let channel = |c| graph.channel_name(c).to_string();
    let mut object = json!({
        "type": event.kind(),
        "index": index,
        "time": time.to_string(),
        "time_ns": time.as_nanos(),
    });
    let fields = match event {
        // ---- batch events (P2)
        &TraceEvent::VertexInitialized {
            vertex,
            parallelism,
            input_bytes,
            adaptive,
        } => json!({"vertex": graph.vertices[vertex.index()].name, "parallelism": parallelism,
                        "input_bytes": input_bytes, "adaptive": adaptive}),
        &TraceEvent::SplitAssigned {
            subtask,
            attempt,
            split,
        } => json!({"task": name(subtask), "attempt": attempt, "split": split}),
        &TraceEvent::PartitionWritten {
            subtask,
            attempt,
            bytes,
            remote,
        } => {
            json!({"task": name(subtask), "attempt": attempt, "bytes": bytes, "remote": remote})
        }
        &TraceEvent::JobEventLogged { what, snapshot } => match what {
            Logged::VertexInitialized(v) => json!({"event": "vertex_initialized",
                    "vertex": graph.vertices[v.index()].name, "snapshot": snapshot}),
            Logged::Finished(s) => {
                json!({"event": "finished", "task": name(s), "snapshot": snapshot})
            }
            Logged::Reset(n) => json!({"event": "reset", "subtasks": n, "snapshot": snapshot}),
        },
        &TraceEvent::JobEventsFlushed { events, reason } => {
            json!({"events": events, "reason": reason.name()})
        }
        &TraceEvent::JobEventsLost { events }
        | &TraceEvent::JobEventsWriteFailed { events }
        | &TraceEvent::JobEventsUnreadable { events } => json!({"events": events}),
        &TraceEvent::RecoveryStarted {
            replayed,
            discarded,
            full_restart,
        } => {
            json!({"replayed": replayed, "discarded": discarded, "full_restart": full_restart})
        }
        &TraceEvent::PartitionReported {
            task_manager,
            subtask,
            attempt,
            late,
        } => {
            json!({"task_manager": task_manager, "task": name(subtask), "attempt": attempt, "late": late})
        }
        &TraceEvent::PartitionReleased {
            subtask,
            attempt,
            remote,
        } => json!({"task": name(subtask), "attempt": attempt, "remote": remote}),
        &TraceEvent::ReleaseRequested {
            task_manager,
            subtask,
            attempt,
        }
        | &TraceEvent::TaskRpcRefused {
            task_manager,
            subtask,
            attempt,
        }
        | &TraceEvent::Deployed {
            subtask,
            attempt,
            task_manager,
            speculative: false,
        } => json!({"task_manager": task_manager, "task": name(subtask), "attempt": attempt}),
        // P2.8: the field appears only on speculative deployments, so older traces read alike.
        &TraceEvent::Deployed {
            subtask,
            attempt,
            task_manager,
            speculative: true,
        } => json!({"task_manager": task_manager, "task": name(subtask), "attempt": attempt,
                    "speculative": true}),
        &TraceEvent::SubtaskReset { subtask, reason } => {
            json!({"task": name(subtask), "reason": reason.name()})
        }
        &TraceEvent::RecoveryEnded {
            recovered,
            rerun,
            timed_out,
        } => json!({"recovered": recovered, "rerun": rerun, "timed_out": timed_out}),
        &TraceEvent::PartitionNotFound { subtask, producer } => {
            json!({"task": name(subtask), "producer": name(producer)})
        }
        &TraceEvent::TaskManagerDisconnected { task_manager }
        | &TraceEvent::TaskManagerReconnected { task_manager }
        | &TraceEvent::LeaderLost { task_manager }
        | &TraceEvent::LeaderFound { task_manager } => {
            json!({"task_manager": task_manager})
        }
        TraceEvent::JobResultWritten | TraceEvent::SpeculationChecked => json!({}),
        &TraceEvent::OutputCommitted { subtask, records } => {
            json!({"task": name(subtask), "records": records})
        }
        // ---- both kinds of job, and streaming
        TraceEvent::JobStatus { from, to } => json!({"from": from.name(), "to": to.name()}),
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
        } => {
            json!({"task": name(*subtask), "attempt": attempt, "from": from.name(), "to": to.name()})
        }
        TraceEvent::Rpc {
            from,
            to,
            sent_at,
            rpc,
        } => {
            let (method, _, args) = call_parts(&rpc.call);
            json!({
                "from": address(*from),
                "to": address(*to),
                "sent_at": sent_at.to_string(),
                "sent_at_ns": sent_at.as_nanos(),
                "method": method,
                "task": name(rpc.subtask),
                "attempt": rpc.attempt,
                "args": args,
            })
        }
        TraceEvent::Push {
            channel: c,
            element,
        }
        | TraceEvent::Arrive {
            channel: c,
            element,
        } => {
            json!({"channel": channel(*c), "element": element_json(graph, element)})
        }
        TraceEvent::Take {
            subtask,
            channel: c,
            element,
        } => {
            json!({"task": name(*subtask), "channel": channel(*c), "element": element_json(graph, element)})
        }
        TraceEvent::BufferSent {
            channel: c,
            records,
            digest,
        } => {
            json!({"channel": channel(*c), "records": records, "digest": format!("{digest:#018x}")})
        }
        TraceEvent::BufferArrived {
            channel: c,
            records,
        } => json!({"channel": channel(*c), "records": records}),
        TraceEvent::BufferTaken {
            subtask,
            channel: c,
            records,
            digest,
        } => {
            json!({"task": name(*subtask), "channel": channel(*c), "records": records, "digest": format!("{digest:#018x}")})
        }
        TraceEvent::Blocked {
            subtask,
            channel: c,
        } => {
            json!({"task": name(*subtask), "channel": channel(*c)})
        }
        TraceEvent::EndOfInput { subtask } => json!({"task": name(*subtask)}),
        TraceEvent::CheckpointTriggered { checkpoint }
        | TraceEvent::CheckpointCompleted { checkpoint } => json!({"checkpoint": checkpoint}),
        TraceEvent::CheckpointNotTriggered { reason } => json!({"reason": reason.id()}),
        TraceEvent::CheckpointSeen {
            subtask,
            checkpoint,
            by_trigger,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint,
                    "by": if *by_trigger { "trigger" } else { "barrier" }}),
        TraceEvent::BarrierInserted {
            subtask,
            channel: c,
            checkpoint,
        } => json!({"task": name(*subtask), "channel": channel(*c), "checkpoint": checkpoint}),
        TraceEvent::AlignmentDone {
            subtask,
            checkpoint,
            alignment,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint,
                    "alignment": alignment.to_string(), "alignment_ns": alignment.as_nanos()}),
        TraceEvent::SnapshotUploaded {
            subtask,
            attempt,
            checkpoint,
        } => json!({"task": name(*subtask), "attempt": attempt, "checkpoint": checkpoint}),
        TraceEvent::BarriersCounted {
            subtask,
            checkpoint,
            waited,
            past_barrier,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint,
                    "waited": waited.to_string(), "waited_ns": waited.as_nanos(),
                    "past_barrier": past_barrier}),
        TraceEvent::Snapshot {
            subtask,
            attempt,
            checkpoint,
            finished,
        } => {
            json!({"task": name(*subtask), "attempt": attempt, "checkpoint": checkpoint, "finished": finished})
        }
        TraceEvent::Retrigger {
            checkpoint,
            finished,
            descendant,
        } => {
            json!({"checkpoint": checkpoint, "finished": name(*finished), "task": name(*descendant)})
        }
        TraceEvent::CheckpointAborted { checkpoint, reason } => {
            json!({"checkpoint": checkpoint, "reason": reason.id()})
        }
        TraceEvent::Commit {
            subtask,
            checkpoint,
            record,
        } => {
            json!({"task": name(*subtask), "checkpoint": checkpoint, "record": record_json(graph, record)})
        }
        TraceEvent::ChainedSink { subtask, record } => {
            json!({"task": name(*subtask), "record": record_json(graph, record)})
        }
        TraceEvent::TransactionCommitted {
            subtask,
            checkpoint,
            records,
            digest: None,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint, "records": records}),
        TraceEvent::TransactionCommitted {
            subtask,
            checkpoint,
            records,
            digest: Some(digest),
        } => {
            json!({"task": name(*subtask), "checkpoint": checkpoint, "records": records, "digest": format!("{digest:#018x}")})
        }
        TraceEvent::AllRecordsProcessed { channel: c } => json!({"channel": channel(*c)}),
        TraceEvent::FaultFired { index, fault } => {
            json!({"fault": index, "what": fault_text(graph, fault)})
        }
        TraceEvent::ChannelReleased {
            channel: c,
            arrivals,
        } => json!({"channel": channel(*c), "arrivals": arrivals}),
        TraceEvent::SavepointTriggered { checkpoint, drain } => {
            json!({"checkpoint": checkpoint, "drain": drain})
        }
        TraceEvent::SavepointRefused { reason } => json!({"reason": reason.id()}),
        TraceEvent::SourceStopped {
            subtask,
            attempt,
            checkpoint,
            drain,
        } => {
            json!({"task": name(*subtask), "attempt": attempt, "checkpoint": checkpoint, "drain": drain})
        }
        TraceEvent::SavepointFailed { checkpoint } => json!({"checkpoint": checkpoint}),
        TraceEvent::Failover {
            cause,
            restarting,
            full,
        } => json!({"cause": cause.map(name), "restarting": restarting, "full": full}),
        TraceEvent::CheckpointFailuresExceeded {
            checkpoint,
            failures,
        } => json!({"checkpoint": checkpoint, "failures": failures}),
        TraceEvent::Restore {
            checkpoint,
            restarted,
            finished,
            region,
        } => json!({
            "checkpoint": checkpoint,
            "restarted": restarted,
            "finished_on_restore": finished,
            "scope": region.map_or("full".to_owned(), |r| {
                format!("region of {}", name(crate::graph::SubtaskId(r)))
            }),
        }),
        TraceEvent::JobMasterLost { incarnation }
        | TraceEvent::JobMasterElected { incarnation } => {
            json!({"incarnation": incarnation})
        }
        TraceEvent::TaskManagerLost { task_manager }
        | TraceEvent::TaskManagerStarted { task_manager }
        | TraceEvent::TaskManagerTimedOut { task_manager } => {
            json!({"task_manager": task_manager})
        }
        TraceEvent::RestartsExhausted { failovers } => json!({"failovers": failovers}),
        TraceEvent::RestoreRejected { checkpoint } => json!({"checkpoint": checkpoint}),
        TraceEvent::ChannelState {
            subtask,
            checkpoint,
            channel: c,
            records,
            output,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint, "channel": channel(*c),
                    "records": records, "side": if *output { "output" } else { "input" }}),
        TraceEvent::RpcLost { from, to, retry } => {
            json!({"from": address(*from), "to": address(*to), "retry": retry.to_string()})
        }
        TraceEvent::RpcRefused { from, rpc } => {
            let (method, _, args) = call_parts(&rpc.call);
            json!({"from": address(*from), "method": method, "task": name(rpc.subtask),
                   "attempt": rpc.attempt, "args": args})
        }
        TraceEvent::ReconcileEnded {
            outcome,
            reported,
            missing,
        } => json!({"outcome": outcome.name(), "reported": reported, "missing": missing}),
        TraceEvent::RpcDropped {
            from,
            to,
            rpc,
            fenced,
        } => {
            let (method, _, args) = call_parts(&rpc.call);
            json!({"from": address(*from), "to": address(*to), "method": method,
                   "task": name(rpc.subtask), "attempt": rpc.attempt, "args": args,
                   "reason": if *fenced { "fenced" } else { "destination_dead" }})
        }
    };
    if let (Value::Object(o), Value::Object(f)) = (&mut object, fields) {
        o.extend(f);
    }
    object
}
