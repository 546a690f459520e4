//! `flinksim view`: a recorded trace as one self-contained HTML page (inline JS, CSS and SVG; no
//! network), showing the run as a space-time diagram with a time slider and, at the selected
//! instant, every task's status, every channel's contents and the pending checkpoints.
//!
//! The page's logic lives in `viewer/viewer.html` (included at compile time); this module turns
//! the trace into the compact JSON it embeds: lanes (one per host, TaskManagers followed by the
//! tasks they host), channels, and one array per trace event. Messages are paired here, with
//! the same pairing as the exports (`export::happenings`), so the page only draws.
//!
//! The page renders only the events of the visible time window, so a trace of 50,000 events or
//! more stays responsive: the SVG never holds more than a few thousand elements.

use super::export::{self, channel_ends, kind, str_field, u64_field, Role, TraceFile, Window};
use serde_json::{json, Value};
use std::collections::HashMap;

const TEMPLATE: &str = include_str!("viewer/viewer.html");
/// Where the template takes the data. The data is JSON with `<` escaped, so it cannot close
/// the `<script>` element it sits in.
const DATA_SLOT: &str = "/*FLINKSIM_DATA*/null";

/// The element class a channel event concerns: `r`ecord, `b`arrier, `u`naligned barrier (acted
/// on when it arrives, never buffered: P1.4), end of `d`ata, `e`nd of partition.
fn element_class(element: &Value) -> &'static str {
    match str_field(element, "kind") {
        "record" => "r",
        "barrier" => "b",
        "unaligned_barrier" => "u",
        "end_of_data" => "d",
        _ => "e",
    }
}

/// Lanes in display order: the JobManager's hosts, then each TaskManager followed by the tasks
/// deployed to it (first deployment), then anything else in order of appearance.
fn lanes(trace: &TraceFile) -> Vec<String> {
    let mut lanes: Vec<String> = vec!["JobMaster".into(), "Checkpointing".into()];
    let mut tasks_of: Vec<(u64, Vec<String>)> = Vec::new();
    for event in &trace.events {
        if kind(event) == "rpc" && str_field(event, "method") == "submitTask" {
            let tm = str_field(event, "to")
                .trim_start_matches("TaskManager")
                .parse::<u64>()
                .unwrap_or(0);
            let task = str_field(event, "task").to_owned();
            if tasks_of.iter().any(|(_, ts)| ts.contains(&task)) {
                continue;
            }
            match tasks_of.iter_mut().find(|(t, _)| *t == tm) {
                Some((_, ts)) => ts.push(task),
                None => tasks_of.push((tm, vec![task])),
            }
        }
    }
    tasks_of.sort_by_key(|(tm, _)| *tm);
    for (tm, tasks) in tasks_of {
        lanes.push(format!("TaskManager{tm}"));
        lanes.extend(tasks);
    }
    for event in &trace.events {
        let host = export::host_of(event);
        if !lanes.contains(&host) {
            lanes.push(host);
        }
    }
    lanes
}

/// The data the page embeds.
pub fn data(trace: &TraceFile) -> Value {
    let lanes = lanes(trace);
    let lane: HashMap<&str, usize> = lanes
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let mut channels: Vec<String> = Vec::new();
    let mut channel_index: HashMap<String, usize> = HashMap::new();
    for event in &trace.events {
        let c = str_field(event, "channel");
        if !c.is_empty() && !channel_index.contains_key(c) {
            channel_index.insert(c.to_owned(), channels.len());
            channels.push(c.to_owned());
        }
    }
    // Message ends, from the same pairing as the exports: receipt index → (send time, lane).
    let mut sends: HashMap<u64, (u64, usize)> = HashMap::new();
    let mut received_from: HashMap<u64, (u64, usize)> = HashMap::new();
    for h in export::happenings(trace, &Window::default()) {
        let index = u64_field(h.event, "index");
        match h.role {
            Role::Send(id) => {
                sends.insert(id, (h.time_ns, lane[h.host.as_str()]));
            }
            Role::Receive(id) => {
                if let Some(&send) = sends.get(&id) {
                    received_from.insert(index, send);
                }
            }
            Role::Local => {}
        }
    }
    let mut events = Vec::with_capacity(trace.events.len());
    for event in &trace.events {
        let index = u64_field(event, "index");
        let host = export::host_of(event);
        let mut e = json!({
            "t": u64_field(event, "time_ns"),
            "k": kind(event),
            "l": lane[host.as_str()],
            "d": export::label_of(event),
        });
        if let Some(&c) = channel_index.get(str_field(event, "channel")) {
            e["c"] = json!(c);
        }
        match kind(event) {
            "push" | "arrive" | "take" => e["e"] = json!(element_class(&event["element"])),
            "barrier_inserted" => e["e"] = json!("b"),
            "task_state" => {
                e["s"] = json!(str_field(event, "to"));
                // A redeployment empties the task's channels (see `replay` in the page).
                e["r"] =
                    json!(str_field(event, "from") == "CREATED" && u64_field(event, "attempt") > 0);
            }
            "checkpoint_triggered" | "checkpoint_completed" | "checkpoint_aborted" => {
                e["n"] = json!(u64_field(event, "checkpoint"));
            }
            _ => {}
        }
        if let Some(&(t, l)) = received_from.get(&index) {
            e["m"] = json!([t, l]);
        }
        events.push(e);
    }
    // Channel → (producer lane, consumer lane), for resetting a restarted task's channels.
    let ends: Vec<[usize; 2]> = channels
        .iter()
        .map(|c| {
            let (from, to) = channel_ends(c);
            [
                lane.get(from).copied().unwrap_or(0),
                lane.get(to).copied().unwrap_or(0),
            ]
        })
        .collect();
    let tasks: Vec<usize> = trace
        .events
        .iter()
        .filter(|e| kind(e) == "task_state")
        .map(|e| lane[str_field(e, "task")])
        .fold(Vec::new(), |mut v, l| {
            if !v.contains(&l) {
                v.push(l);
            }
            v
        });
    json!({
        "scenario": trace.header["scenario"]["name"],
        "description": trace.header["scenario"]["description"],
        "seed": trace.header["seed"],
        "status": trace.end.as_ref().map(|e| e["status"].clone()),
        "lanes": lanes,
        "tasks": tasks,
        "channels": channels,
        "channelEnds": ends,
        "events": events,
    })
}

/// The page for `trace`.
pub fn html(trace: &TraceFile) -> String {
    let data = serde_json::to_string(&data(trace))
        .expect("JSON values serialize")
        .replace('<', "\\u003c");
    assert!(TEMPLATE.contains(DATA_SLOT), "the template has a data slot");
    TEMPLATE.replacen(DATA_SLOT, &data, 1)
}
