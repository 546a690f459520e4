//! One trace event as a timeline line (`line`) or a JSON object (`json`); the helpers both
//! share name addresses, records, elements, calls and faults the way scenarios write them.

mod json;
mod line;

pub use json::event_json;
pub use line::event_line;

use crate::graph::ExecutionGraph;
use crate::record::{Element, Record, StopMode};
use crate::trace::{Address, Call, FaultEvent, Rpc};
use serde_json::{json, Value};

pub(super) fn address(a: Address) -> String {
    match a {
        Address::JobMaster => "JobMaster".to_owned(),
        Address::TaskManager(i) => format!("TaskManager{i}"),
    }
}

pub(super) fn record_text(graph: &ExecutionGraph, r: &Record) -> String {
    format!(
        "record {}#{} (key {}, value {})",
        graph.subtask_name(r.origin),
        r.seq,
        r.key,
        r.value
    )
}

pub(super) fn element_text(graph: &ExecutionGraph, element: &Element) -> String {
    match element {
        Element::Record(r) => record_text(graph, r),
        Element::Barrier(n) => format!("barrier {n}"),
        Element::PriorityBarrier(n) => format!("unaligned barrier {n}"),
        Element::CancelMarker(n) => format!("cancel marker {n}"),
        Element::EndOfData(StopMode::Drain) => "EndOfData".to_owned(),
        Element::EndOfData(StopMode::NoDrain) => "EndOfData(no drain)".to_owned(),
        Element::EndOfPartition => "EndOfPartition".to_owned(),
    }
}

pub(super) fn record_json(graph: &ExecutionGraph, r: &Record) -> Value {
    json!({
        "kind": "record",
        "origin": graph.subtask_name(r.origin).to_string(),
        "seq": r.seq,
        "key": r.key,
        "value": r.value,
    })
}

pub(super) fn element_json(graph: &ExecutionGraph, element: &Element) -> Value {
    match element {
        Element::Record(r) => record_json(graph, r),
        Element::Barrier(n) => json!({"kind": "barrier", "checkpoint": n}),
        Element::PriorityBarrier(n) => json!({"kind": "unaligned_barrier", "checkpoint": n}),
        Element::CancelMarker(n) => json!({"kind": "cancel_marker", "checkpoint": n}),
        Element::EndOfData(StopMode::Drain) => json!({"kind": "end_of_data"}),
        Element::EndOfData(StopMode::NoDrain) => json!({"kind": "end_of_data", "drain": false}),
        Element::EndOfPartition => json!({"kind": "end_of_partition"}),
    }
}

/// `(method name, arguments as text, arguments as JSON)` of an RPC call.
pub(super) fn call_parts(call: &Call) -> (&'static str, String, Value) {
    match *call {
        Call::SubmitTask(restore) => (
            "submitTask",
            match (restore.checkpoint, restore.finished) {
                (0, false) => String::new(),
                (0, true) => "finished on restore".to_owned(),
                (c, false) => format!("restore from checkpoint {c}"),
                (c, true) => format!("finished on restore, checkpoint {c}"),
            },
            json!({"restore_checkpoint": restore.checkpoint, "finished_on_restore": restore.finished}),
        ),
        Call::CancelTask => ("cancelTask", String::new(), json!({})),
        Call::ReportExecution { state, .. } => (
            "reportExecution",
            state.to_string(),
            json!({"state": state.name()}),
        ),
        Call::ReportDone => ("reportDone", String::new(), json!({})),
        Call::RequestSplit => ("requestSplit", String::new(), json!({})),
        Call::AssignSplit(split) => (
            "assignSplit",
            split.map_or("no split left".to_owned(), |s| format!("split {s}")),
            json!({ "split": split }),
        ),
        Call::UpdateTaskExecutionState { state, .. } => (
            "updateTaskExecutionState",
            state.to_string(),
            json!({"state": state.name()}),
        ),
        // Batch calls: the batch world does not record its RPCs, named here for completeness.
        Call::RegisterTaskManager => ("registerTaskManager", String::new(), json!({})),
        Call::ReleasePartition => ("releasePartition", String::new(), json!({})),
        Call::AskPartitions => ("askPartitions", String::new(), json!({})),
        Call::ReportPartition { bytes } => (
            "reportPartition",
            format!("{bytes} bytes"),
            json!({ "bytes": bytes }),
        ),
        Call::ReportSplit(split) => (
            "reportSplit",
            format!("split {split}"),
            json!({ "split": split }),
        ),
        Call::ReportInput {
            producer,
            producer_attempt,
        } => (
            "reportInput",
            format!("subtask {} attempt {producer_attempt}", producer.0),
            json!({"producer": producer.0, "producer_attempt": producer_attempt}),
        ),
        Call::TriggerCheckpoint(n) => {
            ("triggerCheckpoint", n.to_string(), json!({"checkpoint": n}))
        }
        Call::NotifyCheckpointComplete(n) => (
            "notifyCheckpointComplete",
            n.to_string(),
            json!({"checkpoint": n}),
        ),
        Call::NotifyCheckpointAborted(n) => (
            "notifyCheckpointAborted",
            n.to_string(),
            json!({"checkpoint": n}),
        ),
        Call::AcknowledgeCheckpoint {
            checkpoint,
            finished,
        } => (
            "acknowledgeCheckpoint",
            if finished {
                format!("{checkpoint}, final")
            } else {
                checkpoint.to_string()
            },
            json!({"checkpoint": checkpoint, "finished": finished}),
        ),
        Call::DeclineCheckpoint { checkpoint, reason } => (
            "declineCheckpoint",
            format!("{checkpoint}, {}", reason.id()),
            json!({"checkpoint": checkpoint, "reason": reason.id()}),
        ),
        Call::TriggerMissed(n) => ("triggerMissed", n.to_string(), json!({"checkpoint": n})),
        Call::TriggerFailed(n) => ("triggerFailed", n.to_string(), json!({"checkpoint": n})),
        Call::TriggerSavepoint { checkpoint, drain } => (
            "triggerSavepoint",
            format!("{checkpoint}, {}", if drain { "drain" } else { "no drain" }),
            json!({"checkpoint": checkpoint, "drain": drain}),
        ),
        Call::Finishing => ("finishing", String::new(), json!({})),
        Call::FinishingAnswer(set) => {
            let ids: Vec<u64> = set.iter().collect();
            (
                "finishingAnswer",
                format!("pending {ids:?}"),
                json!({"pending": ids}),
            )
        }
    }
}

pub(super) fn rpc_text(graph: &ExecutionGraph, rpc: &Rpc) -> String {
    let (method, args, _) = call_parts(&rpc.call);
    if rpc.call == Call::ReportDone {
        return format!("{method}()"); // about no subtask
    }
    let sep = if args.is_empty() { "" } else { ", " };
    format!(
        "{method}({} attempt {}{sep}{args})",
        graph.subtask_name(rpc.subtask),
        rpc.attempt
    )
}

pub(super) fn fault_text(graph: &ExecutionGraph, fault: &FaultEvent) -> String {
    match fault {
        FaultEvent::FailTask(s) => format!("task {} fails", graph.subtask_name(*s)),
        FaultEvent::LoseTaskManager(tm) => format!("TaskManager{tm} is lost"),
        FaultEvent::DisconnectTaskManager(tm) => format!("TaskManager{tm} is cut off"),
        FaultEvent::CrashJobMaster => "the JobManager crashes".to_owned(),
        FaultEvent::DelaySpike => "network delay spike".to_owned(),
        FaultEvent::RpcLoss => "RPC loss begins".to_owned(),
        FaultEvent::JobEventsWriteFailure => "the job event store fails to write".to_owned(),
        FaultEvent::JobEventsReadFailure => "the job event store becomes unreadable".to_owned(),
        FaultEvent::TriggerTask {
            subtask,
            checkpoint: 0,
        } => format!(
            "trigger {} by hand: no checkpoint is pending, nothing sent",
            graph.subtask_name(*subtask)
        ),
        FaultEvent::TriggerTask {
            subtask,
            checkpoint,
        } => format!(
            "trigger {} by hand with checkpoint {checkpoint}",
            graph.subtask_name(*subtask)
        ),
        FaultEvent::FailSnapshot {
            subtask,
            checkpoint,
            sync,
        } => format!(
            "the {} part of {}'s snapshot for checkpoint {checkpoint} fails",
            if *sync { "synchronous" } else { "asynchronous" },
            graph.subtask_name(*subtask)
        ),
        FaultEvent::HoldChannel(c) => format!("channel {} is held", graph.channel_name(*c)),
        FaultEvent::StopWithSavepoint { drain: true } => {
            "stop the job with a savepoint, draining it".to_owned()
        }
        FaultEvent::StopWithSavepoint { drain: false } => {
            "stop the job with a savepoint, without drain".to_owned()
        }
    }
}
