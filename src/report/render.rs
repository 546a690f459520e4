//! One trace event as a timeline line or a JSON object.

use crate::graph::ExecutionGraph;
use crate::record::Element;
use crate::trace::{Address, Rpc, TraceEvent};
use serde_json::{json, Value};
use sim::Instant;

fn address(a: Address) -> String {
    match a {
        Address::JobMaster => "JobMaster".to_owned(),
        Address::TaskManager(i) => format!("TaskManager{i}"),
    }
}

fn element_text(graph: &ExecutionGraph, element: &Element) -> String {
    match element {
        Element::Record(r) => format!(
            "record {}#{} (key {}, value {})",
            graph.subtask_name(r.origin),
            r.seq,
            r.key,
            r.value
        ),
        Element::EndOfPartition => "EndOfPartition".to_owned(),
    }
}

fn element_json(graph: &ExecutionGraph, element: &Element) -> Value {
    match element {
        Element::Record(r) => json!({
            "kind": "record",
            "origin": graph.subtask_name(r.origin).to_string(),
            "seq": r.seq,
            "key": r.key,
            "value": r.value,
        }),
        Element::EndOfPartition => json!({"kind": "end_of_partition"}),
    }
}

fn rpc_text(graph: &ExecutionGraph, rpc: &Rpc) -> String {
    match *rpc {
        Rpc::SubmitTask { subtask, attempt } => {
            format!(
                "submitTask({}, attempt {attempt})",
                graph.subtask_name(subtask)
            )
        }
        Rpc::UpdateTaskExecutionState {
            subtask,
            attempt,
            state,
        } => format!(
            "updateTaskExecutionState({}, attempt {attempt}, {state})",
            graph.subtask_name(subtask)
        ),
    }
}

/// `(actor, what happened)` for the timeline.
pub fn event_line(graph: &ExecutionGraph, event: &TraceEvent) -> (String, String) {
    let name = |s| graph.subtask_name(s).to_string();
    let channel = |c| graph.channel_name(c).to_string();
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
    }
}

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
            let (method, detail) = match *rpc {
                Rpc::SubmitTask { subtask, attempt } => (
                    "submit_task",
                    json!({"task": name(subtask), "attempt": attempt}),
                ),
                Rpc::UpdateTaskExecutionState {
                    subtask,
                    attempt,
                    state,
                } => (
                    "update_task_execution_state",
                    json!({"task": name(subtask), "attempt": attempt, "state": state.name()}),
                ),
            };
            json!({
                "from": address(*from),
                "to": address(*to),
                "sent_at": sent_at.to_string(),
                "sent_at_ns": sent_at.as_nanos(),
                "method": method,
                "args": detail,
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
        TraceEvent::Blocked {
            subtask,
            channel: c,
        } => {
            json!({"task": name(*subtask), "channel": channel(*c)})
        }
        TraceEvent::EndOfInput { subtask } => json!({"task": name(*subtask)}),
    };
    if let (Value::Object(o), Value::Object(f)) = (&mut object, fields) {
        o.extend(f);
    }
    object
}
