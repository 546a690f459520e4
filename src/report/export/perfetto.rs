//! Chrome / Perfetto trace-event JSON (loads in ui.perfetto.dev and chrome://tracing).
//!
//! Layout: one process for the JobManager (threads `JobMaster`, `Checkpointing`, `Faults`) and
//! one per TaskManager (a thread for the TaskManager itself and one per task it hosts). A task's
//! execution states are `B`/`E` slices on its thread, its alignments `X` slices nested in them;
//! every checkpoint is an async span (`b`/`e`, id = checkpoint) from trigger to completion or
//! abort; every message (RPC, channel element) is a zero-length `X` slice on each end joined by
//! a flow (`s`/`f`, id = the index of the trace event that sent it). Timestamps are in
//! microseconds, as the format requires. Names are low-cardinality (`barrier`, `rpc:…`); ids
//! and details go in `args`.

use super::{
    happenings, host_of, is_record, kind, str_field, u64_field, Happening, Role, TraceFile, Window,
    READ_ID_BASE, SHUFFLE_SERVICE,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// The JobManager's process id; TaskManager `n` is `TM_PID_BASE + n`.
const JM_PID: u64 = 1;
/// The remote shuffle service's process (batch jobs with remote partitions, P2).
const SHUFFLE_PID: u64 = 2;
const TM_PID_BASE: u64 = 100;
/// Tasks never deployed in the trace (they cannot have events, but stay safe).
const UNKNOWN_PID: u64 = 99;

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Orders hosts: see [`super::host_rank`].
type Rank = Box<dyn Fn(&str) -> (u8, u64)>;

/// Assigns `(pid, tid)` to hosts and remembers the metadata events naming them.
struct Lanes {
    task_manager_of: HashMap<String, u64>,
    ids: BTreeMap<String, (u64, u64)>,
    next_tid: HashMap<u64, u64>,
    /// Orders the threads of a process: JobMaster lanes, then tasks in topological order.
    rank: Rank,
}

impl Lanes {
    fn new(trace: &TraceFile) -> Lanes {
        // A task lives in the process of the TaskManager it was (last) deployed to.
        let mut task_manager_of = HashMap::new();
        // Streaming jobs say so with the submitTask RPC, batch jobs with a `deployed` event.
        for (task, tm) in trace.events.iter().filter_map(super::deployment) {
            task_manager_of.entry(task.to_owned()).or_insert(tm);
        }
        Lanes {
            task_manager_of,
            ids: BTreeMap::new(),
            next_tid: HashMap::new(),
            rank: Box::new(super::host_rank(trace)),
        }
    }

    fn pid_of(&self, host: &str) -> u64 {
        match host {
            "JobMaster" | "Checkpointing" | "Faults" => JM_PID,
            SHUFFLE_SERVICE => SHUFFLE_PID,
            _ => match host.strip_prefix("TaskManager") {
                Some(n) => TM_PID_BASE + n.parse::<u64>().unwrap_or(0),
                None => self
                    .task_manager_of
                    .get(host)
                    .map_or(UNKNOWN_PID, |tm| TM_PID_BASE + tm),
            },
        }
    }

    fn of(&mut self, host: &str) -> (u64, u64) {
        if let Some(&ids) = self.ids.get(host) {
            return ids;
        }
        let pid = self.pid_of(host);
        let tid = self.next_tid.entry(pid).or_insert(1);
        let ids = (pid, *tid);
        *tid += 1;
        self.ids.insert(host.to_owned(), ids);
        ids
    }

    /// `process_name`, `thread_name` and sort-index metadata for every lane used.
    fn metadata(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut processes: Vec<u64> = self.ids.values().map(|(p, _)| *p).collect();
        processes.sort_unstable();
        processes.dedup();
        for pid in processes {
            let name = match pid {
                JM_PID => "JobManager".to_owned(),
                SHUFFLE_PID => "shuffle service".to_owned(),
                UNKNOWN_PID => "not deployed".to_owned(),
                _ => format!("TaskManager{}", pid - TM_PID_BASE),
            };
            out.push(json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}));
            out.push(json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}}));
        }
        // Within a process, lanes sorted as the system is layered (Perfetto sorts by index).
        let mut hosts: Vec<(&String, &(u64, u64))> = self.ids.iter().collect();
        hosts.sort_by_key(|(host, (pid, tid))| (*pid, (self.rank)(host), *tid));
        for (index, (host, (pid, tid))) in hosts.into_iter().enumerate() {
            out.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": host}}));
            out.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": index + 1}}));
        }
        out
    }
}

fn is_terminal_state(state: &str) -> bool {
    matches!(state, "FINISHED" | "FAILED" | "CANCELED")
}

/// The whole export as one JSON object `{"traceEvents": [...], "displayTimeUnit": "ns"}`.
pub fn export(trace: &TraceFile, window: &Window) -> Value {
    let mut lanes = Lanes::new(trace);
    let mut events: Vec<Value> = Vec::new();
    let from = window.from_ns.unwrap_or(0);
    let last = trace
        .events
        .last()
        .map_or(0, |e| u64_field(e, "time_ns"))
        .min(window.to_ns.unwrap_or(u64::MAX));

    // Task state slices: the state every task is in when the window opens starts a slice
    // there; later transitions end one slice and begin the next; the window's end closes
    // what is still open. Computed over the whole trace so a window starts in the right state.
    let mut open: BTreeMap<String, String> = BTreeMap::new();
    let mut opened_in_window = false;
    let visible = |host: &str| window.actors.as_ref().is_none_or(|a| a.contains(host));
    for event in &trace.events {
        let t = u64_field(event, "time_ns");
        if window.to_ns.is_some_and(|to| t > to) {
            break;
        }
        if !opened_in_window && t >= from {
            opened_in_window = true;
            for (task, state) in &open {
                if visible(task) {
                    let (pid, tid) = lanes.of(task);
                    events.push(json!({"ph": "B", "name": state, "cat": "state", "pid": pid, "tid": tid, "ts": us(from)}));
                }
            }
        }
        if kind(event) != "task_state" {
            continue;
        }
        let task = str_field(event, "task").to_owned();
        let to = str_field(event, "to");
        let in_window = t >= from && visible(&task);
        if let Some(state) = open.remove(&task) {
            if in_window {
                let (pid, tid) = lanes.of(&task);
                events.push(json!({"ph": "E", "name": state, "cat": "state", "pid": pid, "tid": tid, "ts": us(t)}));
            }
        }
        if !is_terminal_state(to) {
            if in_window {
                let (pid, tid) = lanes.of(&task);
                events.push(json!({"ph": "B", "name": to, "cat": "state", "pid": pid, "tid": tid, "ts": us(t),
                                   "args": {"attempt": u64_field(event, "attempt")}}));
            }
            open.insert(task, to.to_owned());
        }
    }
    if opened_in_window {
        for (task, state) in &open {
            if visible(task) {
                let (pid, tid) = lanes.of(task);
                events.push(json!({"ph": "E", "name": state, "cat": "state", "pid": pid, "tid": tid, "ts": us(last)}));
            }
        }
    }

    // Checkpoint spans: only those triggered and ended inside the window (an id whose end is
    // past the window or the trace closes at the window's end, marked as such).
    let mut pending: BTreeMap<u64, u64> = BTreeMap::new();
    for h in happenings(trace, window) {
        let event = h.event;
        let (pid, tid) = lanes.of(&h.host);
        let ts = us(h.time_ns);
        let index = u64_field(event, "index");
        match h.role {
            Role::Send(id) | Role::Receive(id) => {
                let (name, cat) = message_name(&h);
                let args = json!({"index": index, "what": h.label});
                events.push(json!({"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": 0, "args": args}));
                let mut flow = json!({"ph": if matches!(h.role, Role::Send(_)) { "s" } else { "f" },
                                      "name": name, "cat": cat, "id": id, "pid": pid, "tid": tid, "ts": ts});
                if matches!(h.role, Role::Receive(_)) {
                    flow["bp"] = json!("e");
                }
                events.push(flow);
                continue;
            }
            Role::Local => {}
        }
        let checkpoint = u64_field(event, "checkpoint");
        match kind(event) {
            "checkpoint_triggered" => {
                pending.insert(checkpoint, h.time_ns);
                events.push(json!({"ph": "b", "name": "checkpoint", "cat": "checkpoint", "id": checkpoint,
                                   "pid": pid, "tid": tid, "ts": ts, "args": {"checkpoint": checkpoint}}));
            }
            "checkpoint_completed" | "checkpoint_aborted" => {
                if pending.remove(&checkpoint).is_some() {
                    let outcome = if kind(event) == "checkpoint_completed" {
                        "completed".to_owned()
                    } else {
                        format!("aborted: {}", str_field(event, "reason"))
                    };
                    events.push(json!({"ph": "e", "name": "checkpoint", "cat": "checkpoint", "id": checkpoint,
                                       "pid": pid, "tid": tid, "ts": ts, "args": {"outcome": outcome}}));
                }
            }
            "alignment_done" => {
                let dur = u64_field(event, "alignment_ns");
                let start = h.time_ns.saturating_sub(dur).max(from);
                events.push(json!({"ph": "X", "name": "alignment", "cat": "checkpoint", "pid": pid, "tid": tid,
                                   "ts": us(start), "dur": us(h.time_ns - start),
                                   "args": {"checkpoint": checkpoint}}));
            }
            // Task states are slices already; record-level local events would drown the rest.
            "task_state" | "take" | "blocked" | "commit" => {}
            // A record pushed into a channel that never delivered it (a failover emptied it).
            "push" if is_record(&event["element"]) => {}
            "arrive" if is_record(&event["element"]) => {}
            other => {
                events.push(json!({"ph": "i", "s": "t", "name": other, "cat": "event", "pid": pid, "tid": tid,
                                   "ts": ts, "args": {"index": index, "what": h.label}}));
            }
        }
    }
    let checkpointing = lanes.of("Checkpointing");
    for (checkpoint, _) in pending {
        events.push(
            json!({"ph": "e", "name": "checkpoint", "cat": "checkpoint", "id": checkpoint,
                           "pid": checkpointing.0, "tid": checkpointing.1, "ts": us(last),
                           "args": {"outcome": "still pending at the end of the export"}}),
        );
    }
    let mut all = lanes.metadata();
    all.extend(events);
    json!({
        "traceEvents": all,
        "displayTimeUnit": "ns",
        "otherData": {
            "scenario": trace.header["scenario"]["name"],
            "seed": trace.header["seed"],
            "source": "flinksim export --format perfetto",
        },
    })
}

/// [`export`] as text: one trace event per line, so a golden file diffs line by line and a
/// large export stays compact.
pub fn export_text(trace: &TraceFile, window: &Window) -> String {
    let value = export(trace, window);
    let mut out = String::from("{\"traceEvents\": [\n");
    let events = value["traceEvents"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (i, event) in events.iter().enumerate() {
        out.push_str(&event.to_string());
        out.push_str(if i + 1 < events.len() { ",\n" } else { "\n" });
    }
    out.push_str("],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ");
    out.push_str(&value["otherData"].to_string());
    out.push_str("}\n");
    out
}

/// A message's low-cardinality name and category. A batch run's messages (P2) are named by
/// what they do, since their trace records no RPC: a deployment (received by the task's first
/// state change), a partition report, a release request, a partition read.
fn message_name(h: &Happening) -> (String, &'static str) {
    let event = h.event;
    if matches!(h.role, Role::Send(id) | Role::Receive(id) if id >= READ_ID_BASE) {
        return ("partition read".to_owned(), "partition");
    }
    match kind(event) {
        "rpc" => (format!("rpc:{}", str_field(event, "method")), "rpc"),
        "deployed" | "task_state" => ("rpc:deploy".to_owned(), "rpc"),
        "partition_reported" => ("rpc:reportPartition".to_owned(), "rpc"),
        "release_requested" | "partition_released" => ("rpc:releasePartition".to_owned(), "rpc"),
        _ => (str_field(&event["element"], "kind").to_owned(), "channel"),
    }
}

/// The hosts the export draws, for `--actors` help.
pub fn hosts(trace: &TraceFile) -> Vec<String> {
    let mut hosts: Vec<String> = trace.events.iter().map(host_of).collect();
    hosts.sort();
    hosts.dedup();
    hosts
}
