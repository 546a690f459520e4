//! `flinksim import-flink-log`: a recorded run of a reference job (`meta.json`, `logs/`,
//! `rest/`, `commits.jsonl`) becomes a conformance trace (`super::trace`).
//!
//! Each log line the protocols explain is matched by one rule below and becomes one event;
//! lines of the protocols' loggers that no rule matches are counted per logger with a few
//! examples (`unmapped`), lines of other loggers are counted as `ignored`: nothing is dropped
//! without a count in the `import_summary`.

mod records;
mod rest;

use records::{commits, meta_events, outputs};
use rest::{exists, job_shape, read_json, rest_checkpoints};

use super::logline::{self, shorten, LogLine};
use super::trace::{Entry, Event, Header, ImportSummary, Trace, Unmapped, FORMAT};
use super::InputError;
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The Flink version the importer reads: 2.3 writes execution ids as
/// `<executionGraphId>_<jobVertexId>_<subtaskIndex>_<attemptNumber>`.
pub const FLINK_VERSION: &str = "2.3";

/// Examples kept per logger of lines that no rule maps.
const EXAMPLES_PER_LOGGER: usize = 3;

/// The loggers whose lines are protocol steps; lines of others (slot pools, resource
/// managers, heartbeats' own classes, metrics) are `ignored`, counted by logger.
const PROTOCOL_LOGGERS: [&str; 13] = [
    "org.apache.flink.runtime.checkpoint.CheckpointCoordinator",
    "org.apache.flink.runtime.checkpoint.CheckpointFailureManager",
    "org.apache.flink.runtime.executiongraph.ExecutionGraph",
    "org.apache.flink.runtime.executiongraph.failover.",
    "org.apache.flink.runtime.scheduler.adaptivebatch.DefaultBatchJobRecoveryHandler",
    "org.apache.flink.runtime.scheduler.DefaultScheduler",
    "org.apache.flink.runtime.jobmaster.JobMaster",
    "org.apache.flink.runtime.jobmaster.event.",
    "org.apache.flink.runtime.taskmanager.Task",
    "org.apache.flink.runtime.taskexecutor.TaskExecutor",
    "org.apache.flink.streaming.runtime.tasks.StreamTask",
    "org.apache.flink.streaming.runtime.tasks.SubtaskCheckpointCoordinatorImpl",
    "org.apache.flink.streaming.runtime.io.checkpointing.",
];

/// Messages of the protocol loggers that are steps the trace does not record as events
/// (barriers per channel, alignment, snapshot phases, notifications, deployment and recovery
/// progress, heartbeats), or housekeeping around them: counted as `known`.
const KNOWN: [&str; 48] = [
    // Barriers and alignment (P1.3, F1.3).
    "Received barrier from channel",
    "All the channels are aligned",
    "on the barrier announcement",
    "Received cancellation barrier",
    // A task's snapshot and its notifications (F1.5).
    "Starting checkpoint",
    "broadcastEvent at",
    "finished synchronous part of checkpoint",
    "Notify checkpoint",
    "Notification of checkpoint",
    "Notification of complete checkpoint",
    "Notification of aborted checkpoint",
    "Confirm completed checkpoint",
    "Abort checkpoint",
    "received an aborted checkpoint for unknown task",
    "Received message for an unknown checkpoint",
    "rejected by the mailbox",
    "Checkpoint state:",
    "Finished operators for task",
    "All pending checkpoints are finished",
    "Waiting for all the records processed",
    "Cleanup StreamTask",
    "Ignoring transition of vertex",
    // Failover and recovery progress (P1.8, F2.4).
    "Calculating tasks to restart",
    "Try to recover status from previously failed job master",
    "Replay all job events successfully",
    "Restore operator coordinators of",
    "All operator coordinators of jobVertex",
    "successfully recovered from JM failover",
    "Start reading job event file",
    "Job events will be written to",
    "Create job event dir",
    // Deployment and task lifecycle around the state changes.
    "Deploying ",
    "deploy into slot",
    "Freeing task resources",
    "network resources (state:",
    "Un-registering task and sending final execution state",
    "Ensuring all FileSystem streams are closed",
    "Creating FileSystem stream leak safety net",
    "Loading JAR files for task",
    "Getting user code class loader",
    "Closing channelStateWriter",
    "Initializing ",
    "Invoking ",
    "Using partitioner",
    "Replacing forward partitioner",
    "Trying to get execution vertices of an uninitialized job vertex",
    // Heartbeats between JobMaster and TaskManagers.
    "heartbeat",
    "Operator event for",
];

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

macro_rules! regex {
    ($pattern:expr) => {{
        static CELL: OnceLock<Regex> = OnceLock::new();
        re(&CELL, $pattern)
    }};
}

const EXEC: &str = r"([0-9a-f]{32})_([0-9a-f]{32})_(\d+)_(\d+)";

/// An execution id, resolved.
#[derive(Clone, Debug)]
struct Exec {
    graph: u32,
    subtask: String,
    attempt: u32,
}

/// Everything the line rules need while reading.
struct Importer {
    /// Flink job vertex id → flinksim vertex id.
    vertex_by_flink_id: BTreeMap<String, String>,
    /// Flink vertex name → flinksim vertex id (for lines that name a task, not an execution).
    vertex_by_name: BTreeMap<String, String>,
    /// Execution graph id → its number, in order of appearance.
    graphs: BTreeMap<String, u32>,
    summary: ImportSummary,
    entries: Vec<(i64, usize, Entry)>,
    /// `checkpoint_triggered` entry index per checkpoint id, and trigger RPCs seen before it.
    triggered_at: BTreeMap<u64, usize>,
    /// When the coordinator logged each trigger (epoch ms): REST shows the subtasks finished
    /// at trigger time as acknowledged no later than that.
    triggered_epoch_ms: BTreeMap<u64, i64>,
    early_triggers: BTreeMap<u64, Vec<String>>,
    /// The largest `(i/p)` seen per vertex (adaptive parallelism is decided at run time).
    parallelism_seen: BTreeMap<String, u32>,
    execution_lines: u64,
    /// Vertices without inputs.
    sources: Vec<String>,
    /// Per log file: a coordinator snapshot was taken for the next finished event (F2.3).
    snapshot_pending: BTreeMap<String, bool>,
}

/// Imports the run in `dir`.
pub fn import(dir: &Path) -> Result<Trace, InputError> {
    let place = dir.display().to_string();
    if !dir.is_dir() {
        return Err(InputError::new(place, "not a directory"));
    }
    let meta_path = dir.join("meta.json");
    if !exists(&meta_path) {
        return Err(InputError::new(
            meta_path.display().to_string(),
            "missing: a run directory has meta.json, logs/ and rest/",
        ));
    }
    let meta = read_json(&meta_path)?;
    let meta_place = meta_path.display().to_string();
    let version = str_field(&meta, "flink_version", &meta_place)?;
    if !version.starts_with(FLINK_VERSION) {
        return Err(InputError::new(
            meta_place,
            format!("a run of Flink {version}; this importer reads Flink {FLINK_VERSION}.x"),
        ));
    }
    let mode = str_field(&meta, "mode", &meta_place)?;
    if mode != "streaming" && mode != "batch" {
        return Err(InputError::new(
            meta_place,
            format!("mode {mode:?}: expected \"streaming\" or \"batch\""),
        ));
    }
    let job_path = dir.join("rest").join("job.json");
    let job_json = read_json(&job_path)?;
    let (vertices, edges) = job_shape(&meta, &job_json, &meta_place, &job_path)?;

    let mut importer = Importer {
        vertex_by_flink_id: vertices
            .iter()
            .map(|v| (v.flink_id.clone(), v.id.clone()))
            .collect(),
        vertex_by_name: vertices
            .iter()
            .map(|v| (v.flink_name.clone(), v.id.clone()))
            .collect(),
        graphs: BTreeMap::new(),
        summary: ImportSummary::default(),
        entries: Vec::new(),
        triggered_at: BTreeMap::new(),
        triggered_epoch_ms: BTreeMap::new(),
        early_triggers: BTreeMap::new(),
        parallelism_seen: BTreeMap::new(),
        execution_lines: 0,
        snapshot_pending: BTreeMap::new(),
        sources: vertices
            .iter()
            .filter(|v| !edges.iter().any(|e| e.to == v.id))
            .map(|v| v.id.clone())
            .collect(),
    };

    let logs = log_files(dir)?;
    let mut lines: Vec<(String, LogLine)> = Vec::new();
    for path in &logs {
        let name = format!(
            "logs/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let text = logline::read_text(path)?;
        let parsed = logline::parse(&text, &path.display().to_string())?;
        if parsed.is_empty() {
            return Err(InputError::new(
                path.display().to_string(),
                "an empty log file",
            ));
        }
        check_version(&parsed, path)?;
        lines.extend(parsed.into_iter().map(|l| (name.clone(), l)));
    }
    // Merge the files by time; within one ms, file order then line order (stable sort).
    lines.sort_by_key(|(_, l)| l.epoch_ms);
    let first_ms = lines.first().map(|(_, l)| l.epoch_ms).unwrap_or_default();
    for (order, (file, line)) in lines.iter().enumerate() {
        importer.summary.lines += 1;
        importer.line(first_ms, order, file, line);
    }
    if importer.execution_lines == 0 {
        return Err(InputError::new(
            format!("{}/logs", dir.display()),
            "no execution state change in the Flink 2.3 form (`name (i/p) \
             (<graph>_<vertex>_<i>_<attempt>) switched from X to Y`): another Flink version, \
             or logs without the executiongraph logger",
        ));
    }
    let order_base = lines.len();
    meta_events(&meta, &meta_place, first_ms, order_base, &mut importer)?;
    if mode == "streaming" {
        rest_checkpoints(dir, &vertices, &mut importer)?;
    }
    commits(dir, first_ms, order_base + 1_000, &mut importer)?;
    outputs(dir, first_ms, order_base + 1_000_000_000, &mut importer)?;

    let mut entries = std::mem::take(&mut importer.entries);
    entries.sort_by_key(|(time, order, _)| (*time, *order));
    let mut summary = importer.summary;
    summary.events = entries.len() as u64;
    // Adaptive parallelism: what the logs show wins over a REST value of -1 or a bound.
    let vertices = vertices
        .into_iter()
        .map(|mut v| {
            if let Some(&p) = importer.parallelism_seen.get(&v.id) {
                v.parallelism = p;
            }
            v
        })
        .collect();
    let header = Header {
        format: FORMAT.to_owned(),
        job: str_field(&meta, "job", &meta_place)?,
        flink_version: version,
        mode,
        run: meta.get("run").and_then(Value::as_u64).unwrap_or(0),
        job_id: meta
            .get("job_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        wall_ms: meta.get("wall_ms").and_then(Value::as_u64).unwrap_or(0),
        status: meta
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        vertices,
        edges,
        params: meta.get("params").cloned().unwrap_or(Value::Null),
    };
    Ok(Trace {
        header,
        entries: entries.into_iter().map(|(_, _, e)| e).collect(),
        summary,
    })
}

pub(super) fn str_field(v: &Value, name: &str, place: &str) -> Result<String, InputError> {
    v.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| InputError::new(place, format!("no string field {name:?}")))
}

/// flinksim's vertex id for a Flink vertex name: the first operator of the chain, without
/// Flink's `Source: ` prefix and the sink topology's `: Writer` / `: Committer` suffixes.
pub fn vertex_id_of(flink_name: &str) -> String {
    let first = flink_name.split(" -> ").next().unwrap_or(flink_name).trim();
    let first = first
        .strip_prefix("Source: ")
        .or_else(|| first.strip_prefix("Sink: "))
        .unwrap_or(first);
    let first = first
        .strip_suffix(": Writer")
        .or_else(|| first.strip_suffix(": Committer"))
        .unwrap_or(first);
    first.trim().to_owned()
}

fn log_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let logs = dir.join("logs");
    let place = logs.display().to_string();
    let read = std::fs::read_dir(&logs)
        .map_err(|e| InputError::new(&place, format!("cannot list the logs: {e}")))?;
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.ends_with(".log") || name.ends_with(".log.gz")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(InputError::new(place, "no *.log or *.log.gz file"));
    }
    Ok(files)
}

/// A log that says it is another Flink version is rejected (its lines may look alike but mean
/// other things).
fn check_version(lines: &[LogLine], path: &Path) -> Result<(), InputError> {
    let version = regex!(r"(?:Flink |Version: |version )(\d+\.\d+)(?:\.\d+)?");
    for l in lines.iter().take(400) {
        if !(l.message.contains("Version") || l.message.contains("Flink ")) {
            continue;
        }
        if let Some(c) = version.captures(&l.message) {
            let v = &c[1];
            if l.message.contains("Starting") && !v.starts_with(FLINK_VERSION) {
                return Err(InputError::new(
                    format!("{}:{}", path.display(), l.line),
                    format!("a log of Flink {v}; this importer reads Flink {FLINK_VERSION}.x"),
                ));
            }
        }
    }
    Ok(())
}

impl Importer {
    fn push(&mut self, first_ms: i64, epoch_ms: i64, order: usize, src: String, event: Event) {
        let time = u64::try_from(epoch_ms - first_ms).unwrap_or(0) * 1_000_000;
        self.entries
            .push((epoch_ms - first_ms, order, Entry { time, src, event }));
    }

    fn exec(&mut self, graph: &str, vertex: &str, index: &str, attempt: &str) -> Option<Exec> {
        let v = self.vertex_by_flink_id.get(vertex)?.clone();
        let next = self.graphs.len() as u32;
        let graph = *self.graphs.entry(graph.to_owned()).or_insert(next);
        Some(Exec {
            graph,
            subtask: format!("{v}[{index}]"),
            attempt: attempt.parse().ok()?,
        })
    }

    fn see_parallelism(&mut self, subtask: &str, p: &str) {
        let (Some((v, _)), Ok(p)) = (subtask.split_once('['), p.parse::<u32>()) else {
            return;
        };
        let e = self.parallelism_seen.entry(v.to_owned()).or_insert(0);
        *e = (*e).max(p);
    }

    fn unmapped(&mut self, logger: &str, text: String) {
        let u: &mut Unmapped = self.summary.unmapped.entry(logger.to_owned()).or_default();
        u.count += 1;
        if u.examples.len() < EXAMPLES_PER_LOGGER {
            u.examples.push(text);
        }
    }

    /// One log record: map it, count it as known, or count it as unmapped / ignored.
    fn line(&mut self, first_ms: i64, order: usize, file: &str, l: &LogLine) {
        let src = format!("{file}:{}", l.line);
        let relevant = PROTOCOL_LOGGERS.iter().any(|p| l.logger.starts_with(p));
        if l.message.starts_with("Snapshot operator coordinators of ")
            && l.message.contains("to job event")
        {
            self.snapshot_pending.insert(file.to_owned(), true);
            self.summary.known += 1;
            return;
        }
        let mut mapped = self.map(l);
        if let Mapped::Events(events) = &mut mapped {
            for e in events {
                if let Event::JobEventWritten {
                    event, snapshot, ..
                } = e
                {
                    if event == "execution_vertex_finished" {
                        *snapshot = self.snapshot_pending.remove(file).unwrap_or(false);
                    }
                }
            }
        }
        match mapped {
            Mapped::Events(events) => {
                self.summary.mapped += 1;
                for e in events {
                    self.push(first_ms, l.epoch_ms, order, src.clone(), e);
                }
            }
            Mapped::Trigger(checkpoint, subtask) => {
                self.summary.mapped += 1;
                match self.triggered_at.get(&checkpoint) {
                    Some(&i) => {
                        if let Event::CheckpointTriggered { triggered, .. } =
                            &mut self.entries[i].2.event
                        {
                            triggered.push(subtask);
                        }
                    }
                    None => self
                        .early_triggers
                        .entry(checkpoint)
                        .or_default()
                        .push(subtask),
                }
            }
            Mapped::Triggered(checkpoint) => {
                self.summary.mapped += 1;
                let triggered = self.early_triggers.remove(&checkpoint).unwrap_or_default();
                self.triggered_at.insert(checkpoint, self.entries.len());
                self.triggered_epoch_ms.insert(checkpoint, l.epoch_ms);
                self.push(
                    first_ms,
                    l.epoch_ms,
                    order,
                    src,
                    Event::CheckpointTriggered {
                        checkpoint,
                        triggered,
                        finished: None,
                        fully_finished: None,
                    },
                );
            }
            Mapped::Known => self.summary.known += 1,
            Mapped::No if relevant => {
                let text = format!("{src}: {}", shorten(&l.message, 160));
                self.unmapped(&l.logger, text);
            }
            Mapped::No => *self.summary.ignored.entry(l.logger.clone()).or_default() += 1,
        }
    }

    fn map(&mut self, l: &LogLine) -> Mapped {
        let m = l.message.as_str();
        let exec_re = regex!(EXEC);
        // Execution state, both views (JobMaster: `name (i/p) (exec)`, TaskManager:
        // `name (i/p)#a (exec)`).
        let state = regex!(
            r"^(.*) \((\d+)/(\d+)\)(#\d+)? \(([0-9a-f]{32})_([0-9a-f]{32})_(\d+)_(\d+)\) switched from ([A-Z_]+) to ([A-Z_]+)"
        );
        if let Some(c) = state.captures(m) {
            let Some(x) = self.exec(&c[5], &c[6], &c[7], &c[8]) else {
                return Mapped::No;
            };
            self.see_parallelism(&x.subtask, &c[3]);
            self.execution_lines += 1;
            let (from, to) = (c[9].to_owned(), c[10].to_owned());
            let tm_view = c.get(4).is_some() || l.logger.ends_with("taskmanager.Task");
            let event = if tm_view {
                Event::TaskState {
                    subtask: x.subtask,
                    attempt: x.attempt,
                    graph: x.graph,
                    from,
                    to,
                }
            } else {
                Event::ExecutionState {
                    subtask: x.subtask,
                    attempt: x.attempt,
                    graph: x.graph,
                    from,
                    to,
                }
            };
            return Mapped::Events(vec![event]);
        }
        let job = regex!(r"^Job .* \(([0-9a-f]{32})\) switched from state ([A-Z_]+) to ([A-Z_]+)");
        if let Some(c) = job.captures(m) {
            return Mapped::Events(vec![Event::JobStatus {
                from: c[2].to_owned(),
                to: c[3].to_owned(),
            }]);
        }
        if l.logger.ends_with(".CheckpointCoordinator") {
            if let Some(c) = regex!(r"^Triggering checkpoint (\d+) ").captures(m) {
                return Mapped::Triggered(c[1].parse().unwrap_or(0));
            }
        }
        let reached = regex!(r"^Trigger checkpoint (\d+)@(\d+) for ([0-9a-f_]+)");
        if let Some(c) = reached.captures(m) {
            let n = c[1].parse().unwrap_or(0);
            if let Some(x) = exec_re.captures(&c[3]) {
                if let Some(x) = self.exec(&x[1], &x[2], &x[3], &x[4]) {
                    return Mapped::Trigger(n, x.subtask);
                }
            }
            return Mapped::No;
        }
        // The trigger RPC reached a TaskManager that no longer runs the task (P1.2's race):
        // the TaskExecutor logs no trigger line for it, the coordinator logs this one.
        let missed = regex!(
            r"^Triggering Checkpoint (\d+) for job \w+ failed due to .*unknown task ([0-9a-f_]+)"
        );
        if let Some(c) = missed.captures(m) {
            let n = c[1].parse().unwrap_or(0);
            if let Some(x) = exec_re.captures(&c[2]) {
                if let Some(x) = self.exec(&x[1], &x[2], &x[3], &x[4]) {
                    return Mapped::Trigger(n, x.subtask);
                }
            }
            return Mapped::No;
        }
        let ack =
            regex!(r"^Received acknowledge message for checkpoint (\d+) from task ([0-9a-f_]+)");
        if let Some(c) = ack.captures(m) {
            let n = c[1].parse().unwrap_or(0);
            if let Some(x) = exec_re.captures(&c[2]) {
                if let Some(x) = self.exec(&x[1], &x[2], &x[3], &x[4]) {
                    return Mapped::Events(vec![Event::CheckpointAcknowledged {
                        checkpoint: n,
                        subtask: x.subtask,
                        attempt: x.attempt,
                    }]);
                }
            }
            return Mapped::No;
        }
        let decline = regex!(r"^Decline checkpoint (\d+) by task ([0-9a-f_]+)");
        if let Some(c) = decline.captures(m) {
            let n = c[1].parse().unwrap_or(0);
            if let Some(x) = exec_re.captures(&c[2]) {
                if let Some(x) = self.exec(&x[1], &x[2], &x[3], &x[4]) {
                    let text = format!("{m}\n{}", l.more);
                    return Mapped::Events(vec![Event::CheckpointDeclined {
                        checkpoint: n,
                        subtask: x.subtask,
                        attempt: x.attempt,
                        reason: decline_reason(&text),
                    }]);
                }
            }
            return Mapped::No;
        }
        if let Some(c) = regex!(r"^Completed checkpoint (\d+) for job").captures(m) {
            return Mapped::Events(vec![Event::CheckpointCompleted {
                checkpoint: c[1].parse().unwrap_or(0),
            }]);
        }
        let failed = regex!(r"^Failed to trigger or complete checkpoint (\d+)");
        if let Some(c) = failed.captures(m) {
            let text = format!("{m}\n{}", l.more);
            return Mapped::Events(vec![Event::CheckpointFailed {
                checkpoint: c[1].parse().ok(),
                reason: failure_reason(&text),
            }]);
        }
        if let Some(c) = regex!(r"^Checkpoint (\d+) of job \w+ expired").captures(m) {
            return Mapped::Events(vec![Event::CheckpointFailed {
                checkpoint: c[1].parse().ok(),
                reason: "expired".to_owned(),
            }]);
        }
        if m.starts_with("Failed to trigger checkpoint") {
            let text = format!("{m}\n{}", l.more);
            return Mapped::Events(vec![Event::CheckpointNotTriggered {
                reason: failure_reason(&text),
            }]);
        }
        if let Some(c) = regex!(r"^Restoring job \w+ from Checkpoint (\d+)").captures(m) {
            return Mapped::Events(vec![Event::Restore {
                checkpoint: c[1].parse().unwrap_or(0),
            }]);
        }
        let failover =
            regex!(r"^(\d+) tasks? will be restarted to recover the failed task ([0-9a-f_]+)");
        if let Some(c) = failover.captures(m) {
            let restarting = c[1].parse().unwrap_or(0);
            if let Some(x) = exec_re.captures(&c[2]) {
                if let Some(x) = self.exec(&x[1], &x[2], &x[3], &x[4]) {
                    return Mapped::Events(vec![Event::Failover {
                        cause: x.subtask,
                        attempt: x.attempt,
                        restarting,
                    }]);
                }
            }
            return Mapped::No;
        }
        if m.starts_with("Finished task ") {
            return match self.end_of_input(m) {
                Some(event) => Mapped::Events(vec![event]),
                // A non-source logs it after its final checkpoint, not at its end of input.
                None => Mapped::Known,
            };
        }
        if let Some(rest) = m.strip_prefix("Write job event ") {
            return match self.job_event(rest) {
                Some(e) => Mapped::Events(vec![e]),
                None => Mapped::No,
            };
        }
        let partitions = regex!(
            r"Partitions to be released: \[(.*)\], missed partitions: \[(.*)\], partitions to be reserved: \[(.*)\]"
        );
        if let Some(c) = partitions.captures(m) {
            let (released, missed, reserved) = (
                self.producers(&c[1]),
                self.producers(&c[2]),
                self.producers(&c[3]),
            );
            return Mapped::Events(vec![Event::PartitionsRecovered {
                released,
                missed,
                reserved,
            }]);
        }
        let reported =
            regex!(r"^Received partition metrics for (\S+) from Task Manager (\S+?)\.?$");
        if let Some(c) = reported.captures(m) {
            let tm = c[2].to_owned();
            return match self.producers(&c[1]).into_iter().next() {
                Some(producer) => Mapped::Events(vec![Event::PartitionReported {
                    producer,
                    task_manager: tm,
                }]),
                None => Mapped::No,
            };
        }
        let late = regex!(r"^Received late report of partition metrics from (\S+?)\. Release");
        if let Some(c) = late.captures(m) {
            return Mapped::Events(vec![Event::LateReport {
                task_manager: c[1].to_owned(),
            }]);
        }
        if KNOWN.iter().any(|k| m.contains(k)) {
            return Mapped::Known;
        }
        Mapped::No
    }

    /// `StreamTask - Finished task <name> (i/p)#a` of a source: its input ended (F1.5 step 1).
    /// Flink logs the line when the task's main loop ends, which for a source is when it ran
    /// out of records; a non-source's loop ends only after its final checkpoint, and its end
    /// of input is not logged at all.
    fn end_of_input(&mut self, m: &str) -> Option<Event> {
        let c = regex!(r"^Finished task (.*) \((\d+)/(\d+)\)#(\d+)").captures(m)?;
        let name = c[1].trim();
        let v = self.vertex_by_name.get(name).cloned().or_else(|| {
            let id = vertex_id_of(name);
            self.vertex_by_flink_id
                .values()
                .find(|v| **v == id)
                .cloned()
        })?;
        if !self.sources.contains(&v) {
            return None;
        }
        let index: u32 = c[2].parse().ok()?;
        Some(Event::EndOfInput {
            subtask: format!("{v}[{}]", index.checked_sub(1)?),
            attempt: c[4].parse().ok()?,
        })
    }

    /// `ExecutionVertexFinishedEvent(executionVertexId='<vertex>_<i>', attemptNumber='a')` and
    /// the other job events (F2.3).
    fn job_event(&mut self, rest: &str) -> Option<Event> {
        let kind = rest
            .split(|c: char| !c.is_ascii_alphanumeric())
            .next()
            .filter(|k| !k.is_empty())?;
        let event = match kind {
            "ExecutionVertexFinishedEvent" => "execution_vertex_finished",
            "ExecutionVertexResetEvent" => "execution_vertex_reset",
            "ExecutionJobVertexInitializedEvent" => "job_vertex_initialized",
            _ => return None,
        };
        let (mut subtask, mut attempt) = (None, None);
        if event == "execution_vertex_finished" {
            let c = regex!(r"([0-9a-f]{32})_(\d+)").captures(rest)?;
            let v = self.vertex_by_flink_id.get(&c[1])?;
            subtask = Some(format!("{v}[{}]", &c[2]));
            attempt = regex!(r"attemptNumber\D*(\d+)")
                .captures(rest)
                .and_then(|a| a[1].parse().ok());
        }
        Some(Event::JobEventWritten {
            event: event.to_owned(),
            subtask,
            attempt,
            snapshot: false,
        })
    }

    /// The producers named in a list of result partition ids (each ends in the producer's
    /// execution id): `vertex[i]#attempt`, in order.
    fn producers(&mut self, list: &str) -> Vec<String> {
        let exec_re = regex!(EXEC);
        let found: Vec<[String; 4]> = exec_re
            .captures_iter(list)
            .map(|c| {
                [
                    c[1].to_owned(),
                    c[2].to_owned(),
                    c[3].to_owned(),
                    c[4].to_owned(),
                ]
            })
            .collect();
        let mut out = Vec::new();
        for [g, v, i, a] in found {
            if let Some(x) = self.exec(&g, &v, &i, &a) {
                out.push(format!("{}#{}", x.subtask, x.attempt));
            }
        }
        out
    }
}

enum Mapped {
    Events(Vec<Event>),
    /// A trigger RPC reached a task (joins its `checkpoint_triggered`).
    Trigger(u64, String),
    Triggered(u64),
    Known,
    No,
}

/// A decline's reason, named like flinksim's decline reasons where there is one.
fn decline_reason(text: &str) -> String {
    if text.contains("tasks not ready") || text.contains("TASK_NOT_READY") {
        "task_not_ready".to_owned()
    } else if text.contains("task is closing") || text.contains("TASK_CLOSING") {
        "task_closing".to_owned()
    } else if text.contains("subsumed") || text.contains("SUBSUMED") {
        "subsumed".to_owned()
    } else if text.contains("end of stream") || text.contains("INPUT_END_OF_STREAM") {
        "input_end_of_stream".to_owned()
    } else {
        format!("other: {}", first_cause(text))
    }
}

/// A failed or refused checkpoint's reason, from the `CheckpointException` Flink logs with it,
/// named like flinksim's abort and trigger-failure reasons where there is one.
fn failure_reason(text: &str) -> String {
    let cause = text
        .lines()
        .find_map(|l| l.split_once("CheckpointException: ").map(|(_, m)| m))
        .unwrap_or(text);
    if cause.contains("unknown task") {
        "trigger_missed_finished_task".to_owned()
    } else if cause.contains("Not all required tasks are currently running")
        || cause.contains("NOT_ALL_REQUIRED_TASKS_RUNNING")
    {
        "not_all_required_tasks_running".to_owned()
    } else if cause.contains("declined") {
        format!("declined_{}", decline_reason(cause))
    } else if cause.contains("expired") {
        "expired".to_owned()
    } else if cause.contains("Coordinator is suspending")
        || cause.contains("shut down")
        || cause.contains("shutdown")
    {
        "job_ended".to_owned()
    } else if cause.contains("subsumed") {
        "subsumed".to_owned()
    } else if cause.contains("failover") || cause.contains("Task has failed") {
        "failover".to_owned()
    } else {
        format!(
            "other: {}",
            shorten(cause.lines().next().unwrap_or("").trim(), 100)
        )
    }
}

fn first_cause(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.contains("Exception:") || l.contains("reason"))
        .unwrap_or_else(|| text.lines().next().unwrap_or(""));
    shorten(line.trim(), 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_names_become_operator_ids() {
        assert_eq!(vertex_id_of("Source: short -> pace"), "short");
        assert_eq!(vertex_id_of("sink: Writer -> sink: Committer"), "sink");
        assert_eq!(vertex_id_of("sum"), "sum");
    }

    #[test]
    fn reasons_use_flinksim_names() {
        assert_eq!(
            decline_reason("Decline … Checkpoint was declined (tasks not ready)"),
            "task_not_ready"
        );
        assert_eq!(
            failure_reason("x\nTaskManager received a checkpoint request for unknown task y"),
            "trigger_missed_finished_task"
        );
    }
}
