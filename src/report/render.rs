//! One trace event as a timeline line or a JSON object.

use crate::graph::ExecutionGraph;
use crate::record::{Element, Record};
use crate::trace::{Address, Call, FaultEvent, Rpc, TraceEvent};
use serde_json::{json, Value};
use sim::Instant;

fn address(a: Address) -> String {
    match a {
        Address::JobMaster => "JobMaster".to_owned(),
        Address::TaskManager(i) => format!("TaskManager{i}"),
    }
}

fn record_text(graph: &ExecutionGraph, r: &Record) -> String {
    format!(
        "record {}#{} (key {}, value {})",
        graph.subtask_name(r.origin),
        r.seq,
        r.key,
        r.value
    )
}

fn element_text(graph: &ExecutionGraph, element: &Element) -> String {
    match element {
        Element::Record(r) => record_text(graph, r),
        Element::Barrier(n) => format!("barrier {n}"),
        Element::PriorityBarrier(n) => format!("unaligned barrier {n}"),
        Element::EndOfData => "EndOfData".to_owned(),
        Element::EndOfPartition => "EndOfPartition".to_owned(),
    }
}

fn record_json(graph: &ExecutionGraph, r: &Record) -> Value {
    json!({
        "kind": "record",
        "origin": graph.subtask_name(r.origin).to_string(),
        "seq": r.seq,
        "key": r.key,
        "value": r.value,
    })
}

fn element_json(graph: &ExecutionGraph, element: &Element) -> Value {
    match element {
        Element::Record(r) => record_json(graph, r),
        Element::Barrier(n) => json!({"kind": "barrier", "checkpoint": n}),
        Element::PriorityBarrier(n) => json!({"kind": "unaligned_barrier", "checkpoint": n}),
        Element::EndOfData => json!({"kind": "end_of_data"}),
        Element::EndOfPartition => json!({"kind": "end_of_partition"}),
    }
}

/// `(method name, arguments as text, arguments as JSON)` of an RPC call.
fn call_parts(call: &Call) -> (&'static str, String, Value) {
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
        Call::ReportExecution(state) => (
            "reportExecution",
            state.to_string(),
            json!({"state": state.name()}),
        ),
        Call::ReportDone => ("reportDone", String::new(), json!({})),
        Call::UpdateTaskExecutionState(state) => (
            "updateTaskExecutionState",
            state.to_string(),
            json!({"state": state.name()}),
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

fn rpc_text(graph: &ExecutionGraph, rpc: &Rpc) -> String {
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

/// `(actor, what happened)` for the timeline.
pub fn event_line(graph: &ExecutionGraph, event: &TraceEvent) -> (String, String) {
    let name = |s| graph.subtask_name(s).to_string();
    let channel = |c| graph.channel_name(c).to_string();
    const CC: &str = "Checkpointing";
    match event {
        TraceEvent::Batch(b) => b.line(graph),
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
                name(*cause),
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
    }
}

fn fault_text(graph: &ExecutionGraph, fault: &FaultEvent) -> String {
    match fault {
        FaultEvent::FailTask(s) => format!("task {} fails", graph.subtask_name(*s)),
        FaultEvent::LoseTaskManager(tm) => format!("TaskManager{tm} is lost"),
        FaultEvent::DisconnectTaskManager(tm) => format!("TaskManager{tm} is cut off"),
        FaultEvent::CrashJobMaster => "the JobManager crashes".to_owned(),
        FaultEvent::DelaySpike => "network delay spike".to_owned(),
        FaultEvent::RpcLoss => "RPC loss begins".to_owned(),
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
        TraceEvent::Batch(b) => b.json(graph),
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
        TraceEvent::TransactionCommitted {
            subtask,
            checkpoint,
            records,
        } => json!({"task": name(*subtask), "checkpoint": checkpoint, "records": records}),
        TraceEvent::AllRecordsProcessed { channel: c } => json!({"channel": channel(*c)}),
        TraceEvent::FaultFired { index, fault } => {
            json!({"fault": index, "what": fault_text(graph, fault)})
        }
        TraceEvent::Failover {
            cause,
            restarting,
            full,
        } => json!({"cause": name(*cause), "restarting": restarting, "full": full}),
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
