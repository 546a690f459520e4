//! `flinksim view`: a recorded trace as one self-contained HTML page (inline JS, CSS and SVG; no
//! network), showing the run as a space-time diagram with a time slider and, at the selected
//! instant, every task's status, every channel's contents and the pending checkpoints.
//!
//! The page's logic lives in `viewer/viewer.html` (included at compile time); this module turns
//! the trace into the compact JSON it embeds: lanes (JobMaster, Checkpointing, Faults, then each
//! TaskManager followed by the tasks deployed to it in the job's topological order, then the
//! shuffle service), channels, one array per trace event, the shaded windows (JobManager and
//! TaskManager outages, fault windows) and the violations the file records. Messages are
//! paired here, with the same pairing as the exports (`export::happenings`: RPCs, channel
//! elements, and a batch run's deployments, partition reports, releases and partition reads),
//! so the page only draws.
//!
//! The page renders only the events of the visible time window, so a trace of 50,000 events or
//! more stays responsive: the SVG never holds more than a few thousand elements, and the page
//! says how many it left out.
//!
//! `view A --compare B` embeds both traces and the index, in each, of the first protocol event
//! where they part ([`crate::compare::first_divergence`], as `compare --diff` defines it).

use super::export::{
    self, channel_ends, kind, str_field, u64_field, Role, TraceFile, Window, READ_ID_BASE,
    SHUFFLE_SERVICE,
};
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

/// The class of a message's arrow: an element class, `p` an RPC, and in batch runs (P2) `D` a
/// deployment, `R` a partition report, `L` a release request, `P` a partition read.
fn arrow_class(receipt: &Value, id: u64) -> &'static str {
    if id >= READ_ID_BASE {
        return "P";
    }
    match kind(receipt) {
        "rpc" => "p",
        "task_state" => "D",
        "partition_reported" => "R",
        "partition_released" => "L",
        _ => element_class(&receipt["element"]),
    }
}

/// Lanes in display order: the JobManager's (JobMaster, Checkpointing, Faults, each when used),
/// then each TaskManager followed by the tasks deployed to it first (a streaming job's
/// `submitTask`, a batch job's `deployed`), tasks in the job's topological order, then the
/// shuffle service, then anything else.
fn lanes(trace: &TraceFile, used: &[String]) -> Vec<String> {
    let rank = export::host_rank(trace);
    let mut tasks_of: Vec<(u64, Vec<String>)> = Vec::new();
    for (task, tm) in trace.events.iter().filter_map(export::deployment) {
        if tasks_of.iter().any(|(_, ts)| ts.iter().any(|t| t == task)) {
            continue;
        }
        match tasks_of.iter_mut().find(|(t, _)| *t == tm) {
            Some((_, ts)) => ts.push(task.to_owned()),
            None => tasks_of.push((tm, vec![task.to_owned()])),
        }
    }
    let mut lanes: Vec<String> = ["JobMaster", "Checkpointing", "Faults"]
        .iter()
        .filter(|l| used.iter().any(|u| u == *l))
        .map(|l| (*l).to_owned())
        .collect();
    for (tm, _) in &tasks_of {
        let name = format!("TaskManager{tm}");
        if !used.contains(&name) {
            lanes.push(name);
        }
    }
    let mut managers: Vec<u64> = used
        .iter()
        .chain(lanes.iter())
        .filter_map(|l| l.strip_prefix("TaskManager")?.parse().ok())
        .collect();
    managers.sort_unstable();
    managers.dedup();
    lanes.retain(|l| !l.starts_with("TaskManager"));
    for tm in managers {
        lanes.push(format!("TaskManager{tm}"));
        if let Some((_, tasks)) = tasks_of.iter_mut().find(|(t, _)| *t == tm) {
            tasks.sort_by_key(|t| rank(t));
            lanes.extend(tasks.iter().cloned());
        }
    }
    if used.iter().any(|u| u == SHUFFLE_SERVICE) {
        lanes.push(SHUFFLE_SERVICE.to_owned());
    }
    let mut rest: Vec<&String> = used.iter().filter(|u| !lanes.contains(u)).collect();
    rest.sort_by_key(|h| rank(h));
    lanes.extend(rest.into_iter().cloned());
    lanes
}

/// What the page says of an event: for a channel event, its verb and channel too.
fn describe(event: &Value) -> String {
    let verb = match kind(event) {
        "push" => "sends",
        "arrive" => "arrives:",
        "take" => "takes",
        _ => return export::label_of(event),
    };
    format!(
        "{verb} {} on {}",
        export::element_label(&event["element"]),
        str_field(event, "channel")
    )
}

/// Windows to shade, `[from_ns, to_ns or null (the end), lane or -1 (every lane), class,
/// label]`: a JobManager outage (`jobmaster_lost` until the next election), a TaskManager
/// lost until one starts in its place or disconnected until it reconnects, a fault of the
/// network that lasts (a delay spike, an RPC loss: its scenario entry's `duration`) on every
/// lane, a held channel on its consumer's lane until it is released.
fn shades(trace: &TraceFile, lane: &HashMap<&str, usize>) -> Vec<Value> {
    let faults = trace.header["scenario"]["faults"].as_array();
    let mut out = Vec::new();
    // Windows still open: (key, from, lane, class, label).
    let mut open: Vec<(String, u64, i64, &str, String)> = Vec::new();
    let lane_of = |name: &str| lane.get(name).map_or(-1, |&l| l as i64);
    let close = |open: &mut Vec<(String, u64, i64, &str, String)>,
                 out: &mut Vec<Value>,
                 key: &str,
                 at: u64| {
        if let Some(i) = open.iter().position(|(k, ..)| k == key) {
            let (_, from, l, class, label) = open.remove(i);
            out.push(json!([from, at, l, class, label]));
        }
    };
    for event in &trace.events {
        let t = u64_field(event, "time_ns");
        let tm = format!("TaskManager{}", u64_field(event, "task_manager"));
        match kind(event) {
            "jobmaster_lost" => open.push((
                "jm".into(),
                t,
                lane_of("JobMaster"),
                "outage",
                "JobManager down".into(),
            )),
            "jobmaster_elected" => close(&mut open, &mut out, "jm", t),
            "taskmanager_lost" => {
                open.push((tm.clone(), t, lane_of(&tm), "outage", format!("{tm} lost")))
            }
            "taskmanager_started" => close(&mut open, &mut out, &tm, t),
            "taskmanager_disconnected" => open.push((
                format!("{tm} link"),
                t,
                lane_of(&tm),
                "outage",
                format!("{tm} disconnected"),
            )),
            "taskmanager_reconnected" => close(&mut open, &mut out, &format!("{tm} link"), t),
            "channel_released" => {
                let channel = str_field(event, "channel");
                close(&mut open, &mut out, &format!("hold {channel}"), t)
            }
            "fault" => {
                let Some(fault) = faults.and_then(|f| f.get(u64_field(event, "fault") as usize))
                else {
                    continue;
                };
                let what = str_field(event, "what").to_owned();
                if str_field(fault, "fault") == "hold_channel" {
                    let channel =
                        format!("{}->{}", str_field(fault, "from"), str_field(fault, "to"));
                    let consumer = lane_of(str_field(fault, "to"));
                    open.push((format!("hold {channel}"), t, consumer, "fault", what));
                } else if let Some(d) = fault
                    .get("duration")
                    // A disconnection is shaded as its TaskManager's outage.
                    .filter(|_| str_field(fault, "fault") != "disconnect_task_manager")
                    .and_then(Value::as_str)
                    .and_then(|d| sim::Duration::parse(d).ok())
                {
                    out.push(json!([t, t + d.as_nanos(), -1, "fault", what]));
                }
            }
            _ => {}
        }
    }
    for (_, from, l, class, label) in open {
        out.push(json!([from, null, l, class, label]));
    }
    out
}

/// The data the page embeds.
pub fn data(trace: &TraceFile) -> Value {
    let happenings = export::happenings(trace, &Window::default());
    let mut used: Vec<String> = Vec::new();
    for h in &happenings {
        if !used.contains(&h.host) {
            used.push(h.host.clone());
        }
    }
    let lanes = lanes(trace, &used);
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
    // Message ends, from the same pairing as the exports: receipt event index → every
    // (send time, lane, arrow class) it receives (a batch task starts by reading several
    // partitions).
    let mut sends: HashMap<u64, (u64, usize)> = HashMap::new();
    let mut received_from: HashMap<u64, Vec<Value>> = HashMap::new();
    for h in &happenings {
        match h.role {
            Role::Send(id) => {
                sends.insert(id, (h.time_ns, lane[h.host.as_str()]));
            }
            Role::Receive(id) => {
                if let Some(&(t, l)) = sends.get(&id) {
                    received_from
                        .entry(u64_field(h.event, "index"))
                        .or_default()
                        .push(json!([t, l, arrow_class(h.event, id)]));
                }
            }
            Role::Local => {}
        }
    }
    let mut events = Vec::with_capacity(trace.events.len());
    let mut position: HashMap<u64, usize> = HashMap::new();
    for (i, event) in trace.events.iter().enumerate() {
        let index = u64_field(event, "index");
        position.insert(index, i);
        let host = export::host_of(event);
        let mut e = json!({
            "t": u64_field(event, "time_ns"),
            "k": kind(event),
            "l": lane.get(host.as_str()).copied().unwrap_or(0),
            "d": describe(event),
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
            "job_event_logged" | "job_events_flushed" | "job_events_lost" => {
                e["n"] = json!(u64_field(event, "events"));
            }
            _ => {}
        }
        if let Some(from) = received_from.remove(&index) {
            e["m"] = json!(from);
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
    let mut tasks: Vec<usize> = Vec::new();
    for e in trace.events.iter().filter(|e| kind(e) == "task_state") {
        if let Some(&l) = lane.get(str_field(e, "task")) {
            if !tasks.contains(&l) {
                tasks.push(l);
            }
        }
    }
    // A violation points at the event where its oracle first saw it: its position here.
    let violations: Vec<Value> = trace
        .violations
        .iter()
        .map(|v| {
            let at = position
                .get(&u64_field(v, "event_index"))
                .copied()
                .unwrap_or(trace.events.len().saturating_sub(1));
            json!({"i": at, "id": str_field(v, "id"), "m": str_field(v, "message")})
        })
        .collect();
    json!({
        "scenario": trace.header["scenario"]["name"],
        "description": trace.header["scenario"]["description"],
        "seed": trace.header["seed"],
        "bug": trace.header["bug"],
        "status": trace.end.as_ref().map(|e| e["status"].clone()),
        "lanes": lanes,
        "tasks": tasks,
        "channels": channels,
        "channelEnds": ends,
        "events": events,
        "shades": shades(trace, &lane),
        "violations": violations,
    })
}

/// Where two traces part: the position, in each, of the first protocol event (time and
/// content, the `index` aside) that differs, by [`crate::compare::first_divergence`], the
/// definition `compare --diff` uses; `None` when their protocol events are the same.
pub fn divergence(a: &TraceFile, b: &TraceFile) -> Option<(usize, usize)> {
    let protocol = |t: &TraceFile| -> Vec<(usize, Value)> {
        t.events
            .iter()
            .enumerate()
            .filter(|(_, e)| !export::is_data(e))
            .map(|(i, e)| {
                let mut e = e.clone();
                if let Some(o) = e.as_object_mut() {
                    o.remove("index");
                }
                (i, e)
            })
            .collect()
    };
    let (pa, pb) = (protocol(a), protocol(b));
    let first = crate::compare::first_divergence(&pa, &pb, |x, y| x.1 == y.1)?;
    let at = |p: &[(usize, Value)], t: &TraceFile| {
        p.get(first)
            .map_or(t.events.len().saturating_sub(1), |(i, _)| *i)
    };
    Some((at(&pa, a), at(&pb, b)))
}

fn page(data: Value) -> String {
    let data = serde_json::to_string(&data)
        .expect("JSON values serialize")
        .replace('<', "\\u003c");
    assert!(TEMPLATE.contains(DATA_SLOT), "the template has a data slot");
    TEMPLATE.replacen(DATA_SLOT, &data, 1)
}

/// The page for `trace`.
pub fn html(trace: &TraceFile) -> String {
    page(json!({"runs": [data(trace)]}))
}

/// The compare page: `a` above `b`, stepping together by simulated time, each marked where
/// the two part.
pub fn compare_html(a: &TraceFile, b: &TraceFile) -> String {
    let (mut da, mut db) = (data(a), data(b));
    if let Some((ia, ib)) = divergence(a, b) {
        da["diverges"] = json!(ia);
        db["diverges"] = json!(ib);
    }
    page(json!({"runs": [da, db], "compare": true}))
}
