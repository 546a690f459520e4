//! `flinksim export`: a recorded trace (`run --trace FILE.jsonl`) in the formats other tools
//! read: Perfetto / Chrome trace-event JSON ([`perfetto`]), a Mermaid sequence diagram
//! ([`mermaid`]) and a ShiViz log with vector clocks ([`shiviz`]).
//!
//! All three read the trace file, not a live run, so anything recorded (a fuzz campaign's
//! failure included) can be exported. They share one reading of it, [`Happening`]s: every event
//! placed on the *host* (the lane: `JobMaster`, `Checkpointing`, `TaskManagerN`, or a task such
//! as `map[0]`) where it happened, with each message (an RPC, or an element pushed into a
//! channel) split into its send on one host and its receipt on another, so that every format
//! draws the same arrows.

pub mod mermaid;
pub mod perfetto;
pub mod shiviz;

use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{self, BufRead};
use std::path::Path;

/// A trace file as written by `run --trace`: its header, its events, the violations (each
/// naming the event where it was first seen), its end object.
pub struct TraceFile {
    pub header: Value,
    pub events: Vec<Value>,
    pub violations: Vec<Value>,
    pub end: Option<Value>,
}

/// Reads a JSON Lines trace file; a line that is not a JSON object with a `type` is an error
/// naming its line number.
pub fn load_trace(path: &Path) -> io::Result<TraceFile> {
    let file = std::fs::File::open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display())))?;
    let mut header = Value::Null;
    let mut events = Vec::new();
    let mut violations = Vec::new();
    let mut end = None;
    for (n, line) in io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}:{}: {why}", path.display(), n + 1),
            )
        };
        let value: Value =
            serde_json::from_str(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
        match value.get("type").and_then(Value::as_str) {
            Some("header") => header = value,
            Some("end") => end = Some(value),
            Some("violation") => violations.push(value),
            Some(_) => events.push(value),
            None => return Err(bad("an object without a \"type\"".to_owned())),
        }
    }
    if header.is_null() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} has no header line: is it a `flinksim run --trace` file?",
                path.display()
            ),
        ));
    }
    Ok(TraceFile {
        header,
        events,
        violations,
        end,
    })
}

/// Which part of a trace to export.
#[derive(Clone, Debug, Default)]
pub struct Window {
    /// Inclusive bounds in simulated nanoseconds.
    pub from_ns: Option<u64>,
    pub to_ns: Option<u64>,
    /// Keep only what happens on these hosts (`map[0]`, `JobMaster`, `TaskManager1`, …).
    pub actors: Option<HashSet<String>>,
}

impl Window {
    fn keeps(&self, time_ns: u64, host: &str) -> bool {
        self.from_ns.is_none_or(|f| time_ns >= f)
            && self.to_ns.is_none_or(|t| time_ns <= t)
            && self.keeps_host(host)
    }

    fn keeps_host(&self, host: &str) -> bool {
        self.actors.as_ref().is_none_or(|a| a.contains(host))
    }
}

/// The role of a happening in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Local,
    /// The sending side of message `id`.
    Send(u64),
    /// The receiving side of message `id`.
    Receive(u64),
}

/// One event placed on its host; a message event yields a send and a receive.
#[derive(Clone, Debug)]
pub struct Happening<'a> {
    pub time_ns: u64,
    pub host: String,
    pub role: Role,
    /// A short description (`barrier 3`, `triggerCheckpoint(map[0], 3)`, `RUNNING → FINISHED`).
    pub label: String,
    /// The trace event.
    pub event: &'a Value,
}

pub(crate) fn str_field<'a>(event: &'a Value, key: &str) -> &'a str {
    event.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(crate) fn u64_field(event: &Value, key: &str) -> u64 {
    event.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The deployment an event records, `(task, TaskManager index)`: a streaming job's
/// `submitTask` RPC or a batch job's `deployed` event; `None` for any other event. Every lane
/// layout (the viewer, Perfetto) places a task by it.
pub(crate) fn deployment(event: &Value) -> Option<(&str, u64)> {
    match kind(event) {
        "rpc" if str_field(event, "method") == "submitTask" => Some((
            str_field(event, "task"),
            str_field(event, "to")
                .trim_start_matches("TaskManager")
                .parse::<u64>()
                .unwrap_or(0),
        )),
        "deployed" => Some((str_field(event, "task"), u64_field(event, "task_manager"))),
        _ => None,
    }
}

pub(crate) fn kind(event: &Value) -> &str {
    str_field(event, "type")
}

/// `(producer, consumer)` of a channel named `a[0]->b[1]`.
pub(crate) fn channel_ends(channel: &str) -> (&str, &str) {
    channel.split_once("->").unwrap_or((channel, channel))
}

/// The lane of remote partitions (batch jobs with a remote shuffle, P2).
pub const SHUFFLE_SERVICE: &str = "ShuffleService";

/// RPC methods the CheckpointCoordinator sends or receives: they belong on its lane rather
/// than the JobMaster's.
const COORDINATOR_METHODS: [&str; 8] = [
    "triggerCheckpoint",
    "notifyCheckpointComplete",
    "notifyCheckpointAborted",
    "acknowledgeCheckpoint",
    "declineCheckpoint",
    "triggerMissed",
    "finishing",
    "finishingAnswer",
];

fn rpc_host(address: &str, method: &str) -> String {
    if address == "JobMaster" && COORDINATOR_METHODS.contains(&method) {
        "Checkpointing".to_owned()
    } else {
        address.to_owned()
    }
}

/// The element of a push/arrive/take as text.
pub(crate) fn element_label(element: &Value) -> String {
    match str_field(element, "kind") {
        "record" => format!(
            "record {}#{}",
            str_field(element, "origin"),
            u64_field(element, "seq")
        ),
        "barrier" => format!("barrier {}", u64_field(element, "checkpoint")),
        "unaligned_barrier" => format!("unaligned barrier {}", u64_field(element, "checkpoint")),
        "end_of_data" => "EndOfData".to_owned(),
        "end_of_partition" => "EndOfPartition".to_owned(),
        other => other.to_owned(),
    }
}

/// Is this a record (as opposed to a barrier or end-of-stream marker)?
pub(crate) fn is_record(element: &Value) -> bool {
    str_field(element, "kind") == "record"
}

/// A record-level event (the `--timeline protocol` and `compare --diff` leave them out):
/// a record pushed, arriving or taken, a producer blocked, a commit, a chained sink.
pub(crate) fn is_data(event: &Value) -> bool {
    match kind(event) {
        "push" | "arrive" | "take" => is_record(&event["element"]),
        "blocked" | "commit" | "chained_sink" => true,
        _ => false,
    }
}

/// The host where a non-message event happened.
pub fn host_of(event: &Value) -> String {
    match kind(event) {
        "checkpoint_triggered"
        | "checkpoint_not_triggered"
        | "checkpoint_completed"
        | "checkpoint_aborted"
        | "retrigger" => "Checkpointing".to_owned(),
        "push" | "all_records_processed" => channel_ends(str_field(event, "channel")).0.to_owned(),
        "arrive" => channel_ends(str_field(event, "channel")).1.to_owned(),
        "taskmanager_lost" | "taskmanager_started" => {
            format!("TaskManager{}", u64_field(event, "task_manager"))
        }
        "rpc" => rpc_host(str_field(event, "to"), str_field(event, "method")),
        "rpc_lost" => str_field(event, "from").to_owned(),
        "fault" => "Faults".to_owned(),
        // Batch (P2): the JobMaster deploys, receives partition reports, asks for releases
        // and refuses RPCs while it reconciles; a TaskManager loses and finds its leader; a
        // remote partition lives in the shuffle service, not in its producer's TaskManager.
        "deployed" | "partition_reported" | "release_requested" | "batch_rpc_refused" => {
            "JobMaster".to_owned()
        }
        "leader_lost"
        | "leader_found"
        | "taskmanager_disconnected"
        | "taskmanager_reconnected"
        | "taskmanager_timed_out" => format!("TaskManager{}", u64_field(event, "task_manager")),
        "partition_released" if event["remote"] == true => SHUFFLE_SERVICE.to_owned(),
        _ => match event.get("task").and_then(Value::as_str) {
            Some(task) if kind(event) != "execution_state" && kind(event) != "retrigger" => {
                task.to_owned()
            }
            _ => "JobMaster".to_owned(),
        },
    }
}

/// A short description of an event, for diagrams.
pub fn label_of(event: &Value) -> String {
    let task = str_field(event, "task");
    let checkpoint = u64_field(event, "checkpoint");
    match kind(event) {
        "job_status" => format!(
            "job {} → {}",
            str_field(event, "from"),
            str_field(event, "to")
        ),
        "execution_state" => format!("sees {task} {}", str_field(event, "to")),
        "task_state" => format!("{} → {}", str_field(event, "from"), str_field(event, "to")),
        "rpc" => {
            let mut args = String::new();
            if let Some(Value::Object(map)) = event.get("args") {
                for (k, v) in map {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    args.push_str(&format!(", {k}={v}"));
                }
            }
            format!("{}({task}{args})", str_field(event, "method"))
        }
        "push" | "arrive" | "take" => element_label(&event["element"]),
        "blocked" => format!("blocked on {}", str_field(event, "channel")),
        "end_of_input" => "end of input".to_owned(),
        "checkpoint_triggered" => format!("trigger checkpoint {checkpoint}"),
        "checkpoint_not_triggered" => format!("no checkpoint: {}", str_field(event, "reason")),
        "checkpoint_seen" => format!(
            "learns of checkpoint {checkpoint} by {}",
            str_field(event, "by")
        ),
        "barrier_inserted" => format!(
            "inserts barrier {checkpoint} before EndOfPartition on {}",
            str_field(event, "channel")
        ),
        "alignment_done" => format!(
            "aligned checkpoint {checkpoint} in {}",
            str_field(event, "alignment")
        ),
        "snapshot" => {
            let final_ = if event["finished"].as_bool() == Some(true) {
                " (final)"
            } else {
                ""
            };
            format!("snapshot {checkpoint}{final_}")
        }
        "retrigger" => format!(
            "re-trigger {task} for checkpoint {checkpoint} ({} finished)",
            str_field(event, "finished")
        ),
        "checkpoint_completed" => format!("checkpoint {checkpoint} completed"),
        "checkpoint_aborted" => format!(
            "checkpoint {checkpoint} aborted: {}",
            str_field(event, "reason")
        ),
        "commit" => format!("commit in transaction {checkpoint}"),
        "transaction_committed" => format!(
            "commits transaction {checkpoint} ({} records)",
            u64_field(event, "records")
        ),
        "all_records_processed" => {
            format!("all records processed on {}", str_field(event, "channel"))
        }
        "fault" => str_field(event, "what").to_owned(),
        "failover" => format!(
            "failover: {} failed, {} restarting",
            str_field(event, "cause"),
            u64_field(event, "restarting")
        ),
        "restore" => format!(
            "restore from checkpoint {checkpoint} ({} restarted, {} finished on restore)",
            u64_field(event, "restarted"),
            u64_field(event, "finished_on_restore")
        ),
        "deployed" => format!(
            "deploys {task} (attempt {}) to TaskManager{}",
            u64_field(event, "attempt"),
            u64_field(event, "task_manager")
        ),
        "partition_reported" => format!(
            "TaskManager{} reports {task}'s partition{}",
            u64_field(event, "task_manager"),
            if event["late"] == true { " (late)" } else { "" }
        ),
        "release_requested" => format!(
            "asks TaskManager{} to release {task}'s partition",
            u64_field(event, "task_manager")
        ),
        "partition_written" => format!(
            "wrote its partition ({} bytes{})",
            u64_field(event, "bytes"),
            if event["remote"] == true {
                ", remote"
            } else {
                ""
            }
        ),
        "partition_released" => format!("{task}'s partition released"),
        "job_event_logged" => {
            let what = match event.get("vertex").and_then(Value::as_str) {
                Some(vertex) => vertex,
                None => task,
            };
            format!(
                "logs {} {what}{} (buffered)",
                str_field(event, "event").replace('_', " "),
                if event["snapshot"] == true {
                    " with a snapshot"
                } else {
                    ""
                }
            )
        }
        "job_events_flushed" => format!(
            "flushes {} job events ({})",
            u64_field(event, "events"),
            str_field(event, "reason").replace('_', " ")
        ),
        "job_events_lost" => format!("{} buffered job events lost", u64_field(event, "events")),
        "channel_state" => format!(
            "{} records of {} as {} channel state of {checkpoint}",
            u64_field(event, "records"),
            str_field(event, "channel"),
            str_field(event, "side")
        ),
        other => other.replace('_', " "),
    }
}

/// The order of a host among an export's lanes, (layer, position in the layer): the JobMaster
/// and its coordinator, the TaskManagers, then the tasks in the job's topological order
/// (sources first), then anything else.
pub(super) fn host_rank(trace: &TraceFile) -> impl Fn(&str) -> (u8, u64) {
    let job = &trace.header["scenario"]["job"];
    let vertices: Vec<&str> = job["vertices"]
        .as_array()
        .map(|v| v.iter().map(|v| v["id"].as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let edges: Vec<(&str, &str)> = job["edges"]
        .as_array()
        .map(|e| {
            e.iter()
                .map(|e| {
                    (
                        e["from"].as_str().unwrap_or(""),
                        e["to"].as_str().unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    // Kahn's algorithm, ties in file order; a vertex on a cycle (none validates) goes last.
    let mut order: Vec<&str> = Vec::new();
    let mut left: Vec<&str> = vertices.clone();
    while let Some(i) = left
        .iter()
        .position(|v| !edges.iter().any(|(f, t)| t == v && left.contains(f)))
    {
        order.push(left.remove(i));
    }
    order.extend(left);
    let position: std::collections::BTreeMap<String, u64> = order
        .iter()
        .enumerate()
        .map(|(i, v)| ((*v).to_owned(), i as u64))
        .collect();
    move |host: &str| {
        if host == "JobMaster" {
            return (0, 0);
        }
        if host == "Checkpointing" {
            return (0, 1);
        }
        if let Some(n) = host.strip_prefix("TaskManager") {
            if let Ok(n) = n.trim_start_matches('-').parse::<u64>() {
                return (1, n);
            }
        }
        if let Some((vertex, rest)) = host.split_once('[') {
            if let (Some(&p), Ok(i)) = (
                position.get(vertex),
                rest.trim_end_matches(']').parse::<u64>(),
            ) {
                return (2, (p << 32) | i);
            }
        }
        (3, 0)
    }
}

/// Splits the trace into happenings in time order (a message's send before its receipt), then
/// keeps those `window` selects. A message received in the window is kept whole, its send too
/// when that came before `--from` (a barrier or RPC already on its way when the window opens
/// still arrives in it), as long as the sender's host is selected. Any other message one of
/// whose ends falls outside the window is kept as a local event on the side that remains, so
/// every `Send(id)` kept has exactly one `Receive(id)` kept, and the reverse.
pub fn happenings<'a>(trace: &'a TraceFile, window: &Window) -> Vec<Happening<'a>> {
    let pairs = pair_channel_elements(&trace.events);
    let batch = batch_messages(trace);
    // (time, event index, 0 = send / 1 = anything else): a send sorts before the receipt of
    // the same message even when both happen at the same instant.
    let mut all: Vec<((u64, u64, u8), Happening<'a>)> = Vec::with_capacity(trace.events.len());
    for h in batch.extra {
        let order = u8::from(!matches!(h.role, Role::Send(_)));
        all.push(((h.time_ns, u64_field(h.event, "index"), order), h));
    }
    for event in &trace.events {
        let index = u64_field(event, "index");
        let time_ns = u64_field(event, "time_ns");
        let label = label_of(event);
        if let Some(&role) = batch.roles.get(&index) {
            let order = u8::from(!matches!(role, Role::Send(_)));
            all.push((
                (time_ns, index, order),
                Happening {
                    time_ns,
                    host: host_of(event),
                    role,
                    label,
                    event,
                },
            ));
            continue;
        }
        match kind(event) {
            "rpc" => {
                let method = str_field(event, "method");
                let sent = u64_field(event, "sent_at_ns");
                all.push((
                    (sent, index, 0),
                    Happening {
                        time_ns: sent,
                        host: rpc_host(str_field(event, "from"), method),
                        role: Role::Send(index),
                        label: label.clone(),
                        event,
                    },
                ));
                all.push((
                    (time_ns, index, 1),
                    Happening {
                        time_ns,
                        host: host_of(event),
                        role: Role::Receive(index),
                        label,
                        event,
                    },
                ));
            }
            "push" => {
                let role = if pairs.contains_key(&index) {
                    Role::Send(index)
                } else {
                    Role::Local
                };
                all.push((
                    (time_ns, index, 0),
                    Happening {
                        time_ns,
                        host: host_of(event),
                        role,
                        label,
                        event,
                    },
                ));
            }
            _ => {
                let role = match pairs.get(&index) {
                    // An arrive is keyed by its own index too, pointing at its push.
                    Some(&push) if kind(event) == "arrive" => Role::Receive(push),
                    _ => Role::Local,
                };
                all.push((
                    (time_ns, index, 1),
                    Happening {
                        time_ns,
                        host: host_of(event),
                        role,
                        label,
                        event,
                    },
                ));
            }
        }
    }
    all.sort_by_key(|(key, _)| *key);
    let received_in: HashSet<u64> = all
        .iter()
        .filter_map(|(_, h)| match h.role {
            Role::Receive(id) if window.keeps(h.time_ns, &h.host) => Some(id),
            _ => None,
        })
        .collect();
    let kept: Vec<Happening<'a>> = all
        .into_iter()
        .map(|(_, h)| h)
        .filter(|h| {
            window.keeps(h.time_ns, &h.host)
                || matches!(h.role, Role::Send(id) if received_in.contains(&id)
                    && window.to_ns.is_none_or(|t| h.time_ns <= t)
                    && window.keeps_host(&h.host))
        })
        .collect();
    let mut sends = HashSet::new();
    let mut receives = HashSet::new();
    for h in &kept {
        match h.role {
            Role::Send(id) => {
                sends.insert(id);
            }
            Role::Receive(id) => {
                receives.insert(id);
            }
            Role::Local => {}
        }
    }
    kept.into_iter()
        .map(|mut h| {
            h.role = match h.role {
                Role::Send(id) if !receives.contains(&id) => Role::Local,
                Role::Receive(id) if !sends.contains(&id) => Role::Local,
                role => role,
            };
            h
        })
        .collect()
}

/// The first id of a partition read (below it, ids are trace event indices).
pub const READ_ID_BASE: u64 = 1 << 40;

/// A batch run's messages (P2), which its trace records at one end or none: the roles of the
/// events that are an end, and the happenings added for the ends no event records.
struct BatchMessages<'a> {
    roles: HashMap<u64, Role>,
    extra: Vec<Happening<'a>>,
}

/// Pairs a batch run's messages: a deployment (`deployed` on the JobMaster) with the first
/// state change of that attempt on its task; a release request with the release; a partition
/// report, received by the JobMaster, with a send on its TaskManager at the same instant (the
/// trace records only the receipt); and a partition read, from the last partition each
/// producer wrote (on the shuffle service when remote) to the consumer's switch to RUNNING
/// (a forward edge reads its own index, any other edge every producer).
fn batch_messages(trace: &TraceFile) -> BatchMessages<'_> {
    let mut roles = HashMap::new();
    let mut extra = Vec::new();
    let job = &trace.header["scenario"]["job"];
    let edges: Vec<(&str, &str, bool)> = job["edges"]
        .as_array()
        .map(|e| {
            e.iter()
                .map(|e| {
                    (
                        e["from"].as_str().unwrap_or(""),
                        e["to"].as_str().unwrap_or(""),
                        e["pattern"] == "forward",
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut deploys: HashMap<(&str, u64), u64> = HashMap::new();
    let mut releases: HashMap<(&str, u64), u64> = HashMap::new();
    // Producer task → its last partition written.
    let mut written: HashMap<&str, &Value> = HashMap::new();
    let mut next_read = READ_ID_BASE;
    for event in &trace.events {
        let index = u64_field(event, "index");
        let time_ns = u64_field(event, "time_ns");
        let task = str_field(event, "task");
        let attempt = u64_field(event, "attempt");
        match kind(event) {
            "deployed" => {
                deploys.insert((task, attempt), index);
            }
            "release_requested" => {
                releases.insert((task, attempt), index);
            }
            "partition_written" => {
                written.insert(task, event);
            }
            "partition_reported" => {
                roles.insert(index, Role::Receive(index));
                extra.push(Happening {
                    time_ns,
                    host: format!("TaskManager{}", u64_field(event, "task_manager")),
                    role: Role::Send(index),
                    label: label_of(event),
                    event,
                });
            }
            "partition_released" => {
                if let Some(request) = releases.remove(&(task, attempt)) {
                    roles.insert(request, Role::Send(request));
                    roles.insert(index, Role::Receive(request));
                }
            }
            "task_state" => {
                if let Some(deploy) = deploys.remove(&(task, attempt)) {
                    roles.insert(deploy, Role::Send(deploy));
                    roles.insert(index, Role::Receive(deploy));
                }
                if str_field(event, "to") != "RUNNING" {
                    continue;
                }
                let Some((vertex, subtask)) = task.split_once('[') else {
                    continue;
                };
                for &(from, _, forward) in edges.iter().filter(|(_, to, _)| *to == vertex) {
                    let mut producers: Vec<(&&str, &&Value)> = written
                        .iter()
                        .filter(|(p, _)| {
                            p.split_once('[')
                                .is_some_and(|(v, i)| v == from && (!forward || i == subtask))
                        })
                        .collect();
                    producers.sort_by_key(|(_, w)| u64_field(w, "index"));
                    for (producer, partition) in producers {
                        let host = if partition["remote"] == true {
                            SHUFFLE_SERVICE.to_owned()
                        } else {
                            (*producer).to_owned()
                        };
                        let label = format!("{task} reads {producer}'s partition");
                        extra.push(Happening {
                            time_ns: u64_field(partition, "time_ns"),
                            host,
                            role: Role::Send(next_read),
                            label: label.clone(),
                            event: partition,
                        });
                        extra.push(Happening {
                            time_ns,
                            host: task.to_owned(),
                            role: Role::Receive(next_read),
                            label,
                            event,
                        });
                        next_read += 1;
                    }
                }
            }
            _ => {}
        }
    }
    BatchMessages { roles, extra }
}

/// Matches every `arrive` with the `push` of the same element on the same channel: the oldest
/// equal element in flight (an unaligned barrier overtakes records, so it is not always the
/// front). A redeployment of either end, or a lost TaskManager, empties the channel: what was
/// in flight is gone. Returns push index → arrive index and arrive index → push index.
fn pair_channel_elements(events: &[Value]) -> HashMap<u64, u64> {
    let mut in_flight: HashMap<&str, VecDeque<(u64, &Value)>> = HashMap::new();
    let mut pairs = HashMap::new();
    for event in events {
        let index = u64_field(event, "index");
        match kind(event) {
            "push" => in_flight
                .entry(str_field(event, "channel"))
                .or_default()
                .push_back((index, &event["element"])),
            "arrive" => {
                let queue = in_flight.entry(str_field(event, "channel")).or_default();
                if let Some(at) = queue.iter().position(|(_, e)| *e == &event["element"]) {
                    let (push, _) = queue.remove(at).expect("position is in range");
                    pairs.insert(push, index);
                    pairs.insert(index, push);
                }
            }
            // A redeployment (attempt > 0) starts with empty channels; a first deployment
            // finds what its producers already sent waiting for it.
            "task_state"
                if str_field(event, "from") == "CREATED" && u64_field(event, "attempt") > 0 =>
            {
                let task = str_field(event, "task");
                in_flight.retain(|channel, _| {
                    let (from, to) = channel_ends(channel);
                    from != task && to != task
                });
            }
            "taskmanager_lost" => in_flight.clear(),
            _ => {}
        }
    }
    pairs
}

/// Parses `--from`/`--to`: a duration such as `15ms`, `2.5s` or `0`.
pub fn parse_time(text: &str) -> Result<u64, String> {
    sim::Duration::parse(text)
        .map(|d| d.as_nanos())
        .map_err(|e| e.to_string())
}
