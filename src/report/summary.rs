//! The run summary, as text for people and as one JSON object for tools (`--summary`).

use crate::run::RunReport;
use serde_json::{json, Value};
use sim::StopReason;

fn stop_id(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Done => "done",
        StopReason::Quiescent => "quiescent",
        StopReason::EventBudget => "event_budget",
        StopReason::TimeBudget => "time_budget",
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
        "diagnosis": report.diagnosis,
        "expectations_met": failures.is_empty(),
        "expectation_failures": failures,
    })
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
    s.push_str(&format!("trace hash   {:#018x}\n", report.trace_hash));
    if report.violations.is_empty() {
        s.push_str("violations   none\n");
    }
    for v in &report.violations {
        s.push_str(&format!(
            "violation    {} at {} (event {}, {}): {}\n",
            v.invariant,
            v.time,
            v.event_index,
            v.actors.join(", "),
            v.message
        ));
    }
    for line in &report.diagnosis {
        s.push_str(&format!("diagnosis    {line}\n"));
    }
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
