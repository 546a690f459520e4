//! The run summary, as text for people and as one JSON object for tools (`--summary`).

use crate::checkpoint::stats::{CheckpointRecord, Outcome};
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::run::RunReport;
use serde_json::{json, Value};
use sim::StopReason;

/// The stable id of a stop reason, as summaries and campaign results write it.
pub fn stop_id(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Done => "done",
        StopReason::Quiescent => "quiescent",
        StopReason::EventBudget => "event_budget",
        StopReason::TimeBudget => "time_budget",
        StopReason::PendingBudget => "pending_budget",
        StopReason::WorkBudget => "work_budget",
    }
}

/// The summary object: it mirrors the scenario's `expect` block, plus what a run measured.
pub fn summary_json(name: &str, report: &RunReport, failures: &[String]) -> Value {
    json!({
        "type": "summary",
        "scenario": name,
        "seed": report.seed,
        "status": report.status.name(),
        "stop": stop_id(report.stop),
        "events": report.events,
        "trace_events": report.trace.len(),
        "sim_time": report.sim_time.to_string(),
        "sim_time_ns": report.sim_time.as_nanos(),
        "trace_hash": format!("{:#018x}", report.trace_hash),
        "sink_records": report.sink_records(),
        "sinks": report.sinks.iter().map(|(n, c)| (n.clone(), json!(c))).collect::<serde_json::Map<_, _>>(),
        "violations": report.violations.iter().map(|v| json!({
            "id": v.invariant.id(),
            "time": v.time.to_string(),
            "actors": v.actors,
            "event_index": v.event_index,
            "message": v.message,
        })).collect::<Vec<_>>(),
        "checkpoints": report.checkpoints.iter().map(|c| checkpoint_json(&report.graph, c)).collect::<Vec<_>>(),
        "completed_checkpoints": report.completed_checkpoints(),
        "retrigger_rpcs": report.retrigger_rpcs(),
        "committed_records": report.committed_records,
        "restore_refused": report.restore_refused,
        "failovers": report.failovers.iter().map(|f| json!({
            "at": f.at.to_string(),
            "cause": f.cause,
            "scope": if f.full { "full" } else { "region" },
            "restored_at": f.restored_at.map(|t| t.to_string()),
            "restored_checkpoint": f.restored_checkpoint,
            "restarted": names(&report.graph, &f.restarted),
            "kept_finished": names(&report.graph, &f.kept_finished),
            "records_replayed": f.records_replayed,
        })).collect::<Vec<_>>(),
        "reconciliations": report.reconciliations.iter().map(|r| json!({
            "started": r.started.to_string(),
            "ended": r.ended.map(|t| t.to_string()),
            "duration": r.ended.map(|t| (t - r.started).to_string()),
            "outcome": r.outcome.map(|o| o.name()),
            "reports": r.reports,
            "late_reports": r.late_reports,
            "kept_running": r.kept_running,
            "kept_finished": r.kept_finished,
        })).collect::<Vec<_>>(),
        "batch": report.batch.as_ref().map(|f| super::batch::batch_json(&report.graph, f)),
        "rpcs_kept": report.rpcs_kept,
        "rpcs_resent": report.rpcs_resent,
        "diagnosis": report.diagnosis,
        "expectations_met": failures.is_empty(),
        "expectation_failures": failures,
    })
}

fn names(graph: &ExecutionGraph, subtasks: &[SubtaskId]) -> Vec<String> {
    subtasks
        .iter()
        .map(|&s| graph.subtask_name(s).to_string())
        .collect()
}

/// What an unaligned checkpoint persisted as channel state; with network buffers (F1.14) also
/// the buffers holding it, as Flink counts it.
fn channel_state_json(c: &CheckpointRecord) -> Value {
    let mut state = json!({
        "input_records": c.input_state_records,
        "output_records": c.output_state_records,
        "bytes": (c.input_state_records + c.output_state_records) * c.record_bytes,
    });
    if c.input_state_buffers + c.output_state_buffers > 0 {
        state["input_buffers"] = json!(c.input_state_buffers);
        state["output_buffers"] = json!(c.output_state_buffers);
    }
    state
}

fn checkpoint_json(graph: &ExecutionGraph, c: &CheckpointRecord) -> Value {
    let mut object = json!({
        "id": c.id,
        "triggered_at": c.triggered_at.to_string(),
        "triggered": names(graph, &c.plan.to_trigger),
        "waited_for": names(graph, &c.plan.to_wait_for),
        "finished": names(graph, &c.plan.finished),
        "fully_finished": c.plan.fully_finished.iter().map(|v| graph.vertices[v.index()].name.clone()).collect::<Vec<_>>(),
        "missed": names(graph, &c.missed),
        "channel_state": channel_state_json(c),
        "retrigger_rpcs": c.retriggers,
        "alignment": c.alignments.iter().map(|(s, d)| (graph.subtask_name(*s).to_string(), json!(d.to_string()))).collect::<serde_json::Map<_, _>>(),
    });
    let extra = match c.outcome {
        Outcome::Pending => json!({"outcome": "pending"}),
        Outcome::Completed(at) => json!({
            "outcome": "completed",
            "completed_at": at.to_string(),
            "duration": (at - c.triggered_at).to_string(),
        }),
        Outcome::Aborted(at, reason) => json!({
            "outcome": "aborted",
            "aborted_at": at.to_string(),
            "abort_reason": reason.id(),
        }),
    };
    if let (Value::Object(o), Value::Object(e)) = (&mut object, extra) {
        o.extend(e);
    }
    object
}

/// `a b c … (+N)`: a list short enough for one summary line.
fn short_list(items: &[String]) -> String {
    const SHOWN: usize = 6;
    if items.is_empty() {
        return "-".to_owned();
    }
    let mut s = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if items.len() > SHOWN {
        s.push_str(&format!(" … (+{})", items.len() - SHOWN));
    }
    s
}

fn checkpoints_text(report: &RunReport) -> String {
    let graph = &report.graph;
    let aborted = report
        .checkpoints
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Aborted(..)))
        .count();
    let mut s = format!(
        "checkpoints  {} triggered, {} completed, {aborted} aborted, {} re-trigger RPCs\n",
        report.checkpoints.len(),
        report.completed_checkpoints(),
        report.retrigger_rpcs()
    );
    let lines = report.checkpoints.iter().map(|c| {
        let outcome = match c.outcome {
            Outcome::Pending => "pending".to_owned(),
            Outcome::Completed(at) => format!("completed at {at} (took {})", at - c.triggered_at),
            Outcome::Aborted(at, reason) => format!("aborted at {at}: {}", reason.id()),
        };
        let state = c.input_state_records + c.output_state_records;
        let buffers = c.input_state_buffers + c.output_state_buffers;
        let state_text = if state > 0 && buffers > 0 {
            format!(
                "; channel state {} in + {} out records ({} bytes) in {} + {} buffers",
                c.input_state_records,
                c.output_state_records,
                state * c.record_bytes,
                c.input_state_buffers,
                c.output_state_buffers
            )
        } else if state > 0 {
            format!(
                "; channel state {} in + {} out records ({} bytes)",
                c.input_state_records,
                c.output_state_records,
                state * c.record_bytes
            )
        } else {
            String::new()
        };
        let slowest = c.alignments.iter().max_by_key(|(_, d)| *d);
        let alignment = slowest.map_or(String::new(), |(t, d)| {
            format!("; slowest alignment {d} at {}", graph.subtask_name(*t))
        });
        format!(
            "  #{:<3} at {:<12} trigger {} | finished {} | {outcome}{alignment}{state_text}{}\n",
            c.id,
            c.triggered_at.to_string(),
            short_list(&names(graph, &c.plan.to_trigger)),
            short_list(&names(graph, &c.plan.finished)),
            if c.retriggers > 0 {
                format!(
                    "; {} re-trigger RPCs after missing {}",
                    c.retriggers,
                    short_list(&names(graph, &c.missed))
                )
            } else {
                String::new()
            }
        )
    });
    push_bounded(&mut s, lines, report.checkpoints.len(), "checkpoints");
    s
}

/// The summary lists at most this many entries of one kind (the first ones and the last
/// ones); `--summary FILE.json` always has all of them. A run with 160,000 checkpoints must
/// not print 160,000 lines.
pub const MAX_LISTED: usize = 30;
const LISTED_TAIL: usize = 10;

/// Appends `lines` (`len` of them), eliding the middle when there are more than
/// [`MAX_LISTED`].
fn push_bounded(s: &mut String, lines: impl Iterator<Item = String>, len: usize, what: &str) {
    let head = MAX_LISTED - LISTED_TAIL;
    for (i, line) in lines.enumerate() {
        if len <= MAX_LISTED || i < head || i >= len - LISTED_TAIL {
            s.push_str(&line);
        } else if i == head {
            s.push_str(&format!(
                "  … {} more {what} not listed (--summary FILE.json lists every one)\n",
                len - MAX_LISTED
            ));
        }
    }
}

/// The human summary printed at the end of `flinksim run`.
pub fn summary_text(
    name: &str,
    report: &RunReport,
    failures: &[String],
    reproduce: &str,
) -> String {
    let mut s = String::new();
    let sinks: Vec<String> = report
        .sinks
        .iter()
        .map(|(n, c)| format!("{n}={c}"))
        .collect();
    s.push_str(&format!("\n== summary: {name}\n"));
    s.push_str(&format!("status       {}\n", report.status));
    s.push_str(&format!("stopped      {}\n", report.stop));
    s.push_str(&format!(
        "events       {} ({} trace events)\n",
        report.events,
        report.trace.len()
    ));
    s.push_str(&format!("sim time     {}\n", report.sim_time));
    s.push_str(&format!(
        "sink records {} ({})\n",
        report.sink_records(),
        sinks.join(", ")
    ));
    if report.committed_records > 0 {
        s.push_str(&format!(
            "committed    {} records (two-phase-commit sinks)\n",
            report.committed_records
        ));
    }
    if !report.checkpoints.is_empty() {
        s.push_str(&checkpoints_text(report));
    }
    if let Some(reason) = &report.restore_refused {
        s.push_str(&format!(
            "not started  restore_from refused (F1.6): {reason}\n"
        ));
    }
    for f in &report.failovers {
        let restored = match (f.restored_at, f.restored_checkpoint) {
            (None, _) => "not restored before the run ended".to_owned(),
            (Some(at), Some(c)) => format!("restored from checkpoint {c} at {at}"),
            (Some(at), None) => format!("restarted from scratch at {at}"),
        };
        s.push_str(&format!(
            "failover     at {}: {} ({} scope); {restored}; {} restarted, {} kept finished, {} records replayed\n",
            f.at,
            f.cause,
            if f.full { "full" } else { "region" },
            f.restarted.len(),
            f.kept_finished.len(),
            f.records_replayed
        ));
    }
    for r in &report.reconciliations {
        let ended = match (r.ended, r.outcome) {
            (Some(end), Some(outcome)) => {
                format!("{} after {}", outcome.name(), end - r.started)
            }
            _ => "still open when the run ended".to_owned(),
        };
        s.push_str(&format!(
            "reconcile    at {}: {ended}; {} executions reported ({} late), {} kept running, {} kept finished\n",
            r.started, r.reports, r.late_reports, r.kept_running, r.kept_finished
        ));
    }
    if let Some(figures) = &report.batch {
        s.push_str(&super::batch::batch_text(figures));
    }
    if report.rpcs_kept > 0 {
        s.push_str(&format!(
            "rpcs kept    {} refused or sent to no JobMaster, kept by their TaskManager; {} sent again\n",
            report.rpcs_kept, report.rpcs_resent
        ));
    }
    s.push_str(&format!("trace hash   {:#018x}\n", report.trace_hash));
    if report.violations.is_empty() {
        s.push_str("violations   none\n");
    }
    let violations = report.violations.iter().map(|v| {
        format!(
            "violation    {} at {} (event {}, {}): {}\n",
            v.invariant,
            v.time,
            v.event_index,
            v.actors.join(", "),
            v.message
        )
    });
    push_bounded(&mut s, violations, report.violations.len(), "violations");
    let diagnosis = report
        .diagnosis
        .iter()
        .map(|line| format!("diagnosis    {line}\n"));
    push_bounded(&mut s, diagnosis, report.diagnosis.len(), "diagnosis lines");
    if failures.is_empty() {
        s.push_str("expectations met\n");
    } else {
        for f in failures {
            s.push_str(&format!("NOT AS EXPECTED: {f}\n"));
        }
    }
    s.push_str(&format!("reproduce    {reproduce}\n"));
    s
}
