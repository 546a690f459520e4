//! The conformance trace: JSON Lines, one object per protocol step of a real Flink run, every
//! object with a `"type"`, in flinksim's vocabulary. The first object is the `run` header (the
//! job's shape), the last the `import_summary` (what the importer could not map). Every other
//! object carries `time` (ns since the run's first log line) and `src` (`file:line` it came
//! from). See `docs/conformance.md` for every type and field.

use super::InputError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

/// The format's name and version, in the header; a trace of another version is rejected.
pub const FORMAT: &str = "flinksim-conform/1";

/// The job's shape and the run's facts, from `meta.json` and `rest/job.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub format: String,
    pub job: String,
    pub flink_version: String,
    /// `streaming` or `batch`.
    pub mode: String,
    pub run: u64,
    pub job_id: String,
    pub wall_ms: u64,
    /// The job's final status as the recorder saw it.
    pub status: String,
    /// Vertices in `meta.json`'s order, named as flinksim names them.
    pub vertices: Vec<VertexInfo>,
    pub edges: Vec<EdgeInfo>,
    /// The job's parameters, as recorded (they decide the expected output).
    pub params: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VertexInfo {
    /// flinksim's vertex id: the operator's name.
    pub id: String,
    pub parallelism: u32,
    /// Flink's job vertex id (hex) and name.
    pub flink_id: String,
    pub flink_name: String,
    /// Records the vertex's last attempts emitted (REST `write-records`), if REST says.
    pub records_out: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeInfo {
    pub from: String,
    pub to: String,
    /// `forward` or `all_to_all`.
    pub pattern: String,
}

/// One protocol step. Subtasks are written `vertex[i]` (0-based), attempts by number; `graph`
/// numbers the execution graphs (0 for the first JobManager's, 1 after a JobManager failover…),
/// since a recovered batch job starts attempt numbers again under a new graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    Run(Header),
    /// The job's status changed (JobMaster).
    JobStatus {
        from: String,
        to: String,
    },
    /// The JobMaster's view of an execution changed.
    ExecutionState {
        subtask: String,
        attempt: u32,
        graph: u32,
        from: String,
        to: String,
    },
    /// The task's own state changed, on its TaskManager.
    TaskState {
        subtask: String,
        attempt: u32,
        graph: u32,
        from: String,
        to: String,
    },
    /// The coordinator's time came but it took no checkpoint id (`reason`).
    CheckpointNotTriggered {
        reason: String,
    },
    /// Checkpoint `checkpoint` was triggered: `triggered` got the trigger RPC; `finished` were
    /// finished at trigger time, as Flink's REST statistics show (`None`: no REST dump).
    CheckpointTriggered {
        checkpoint: u64,
        triggered: Vec<String>,
        finished: Option<Vec<String>>,
        /// Vertices whose subtasks were all finished: fully finished operators (F1.6).
        fully_finished: Option<Vec<String>>,
    },
    CheckpointAcknowledged {
        checkpoint: u64,
        subtask: String,
        attempt: u32,
    },
    CheckpointDeclined {
        checkpoint: u64,
        subtask: String,
        attempt: u32,
        reason: String,
    },
    /// The coordinator aborted `checkpoint` (`None` when the log does not say which).
    CheckpointFailed {
        checkpoint: Option<u64>,
        reason: String,
    },
    CheckpointCompleted {
        checkpoint: u64,
    },
    /// A source reached the end of its input (`StreamTask - Finished task`; other tasks do
    /// not log theirs).
    EndOfInput {
        subtask: String,
        attempt: u32,
    },
    /// The JobMaster restarts `restarting` tasks to recover `cause` (region failover, P1.8).
    Failover {
        cause: String,
        attempt: u32,
        restarting: u32,
    },
    /// The restarted tasks restore checkpoint `checkpoint`.
    Restore {
        checkpoint: u64,
    },
    /// One committed record, as the reference job's committer logged it (`commits.jsonl`).
    Commit {
        checkpoint: u64,
        writer: u32,
        attempt: u32,
        seq: u64,
        key: i64,
        value: i64,
        committer: u32,
        /// The sink that committed it, when the commit log says (several sinks may share it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sink: Option<String>,
    },
    /// One record a batch sink wrote (`output.jsonl`), raw: a sink subtask that runs again
    /// writes again, from `seq` 0.
    Output {
        writer: u32,
        attempt: u32,
        seq: u64,
        key: i64,
        value: i64,
    },
    /// The JobMaster wrote a job event (batch, P2.2): `execution_vertex_finished`
    /// (`subtask`, `attempt`), `execution_vertex_reset`, `job_vertex_initialized`.
    JobEventWritten {
        event: String,
        subtask: Option<String>,
        attempt: Option<u32>,
        /// A finished event that carries the coordinators' snapshot (the JobMaster logged
        /// "Snapshot operator coordinators … to job event" just before writing it): replay
        /// keeps finished events up to the last one with a snapshot (F2.3).
        snapshot: bool,
    },
    /// A TaskManager's partition report reached the new JobMaster after it had stopped
    /// waiting: its partitions are released (F2.4 step 3).
    LateReport {
        task_manager: String,
    },
    /// A new JobMaster classified the partitions it found (F2.4 step 3), named by the producer
    /// subtask and attempt (`vertex[i]#a`).
    PartitionsRecovered {
        released: Vec<String>,
        missed: Vec<String>,
        reserved: Vec<String>,
    },
    /// A TaskManager reported a partition it kept to a new JobMaster (F2.4 step 1), named by
    /// its producer (`vertex[i]#a`).
    PartitionReported {
        producer: String,
        task_manager: String,
    },
    /// The recorder killed the JobManager process (`kill -9`).
    JobmasterLost {
        pid: Option<u64>,
    },
    /// The recorder started a new JobManager process.
    JobmasterStarted {
        pid: Option<u64>,
    },
    /// Anything else the recorder did (`what` from `meta.json`): TaskManager kills, stops
    /// and resumes, ZooKeeper, the submission.
    RecorderEvent {
        what: String,
        pid: Option<u64>,
    },
    /// What the importer read and could not map.
    ImportSummary(ImportSummary),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportSummary {
    /// Log lines (with their continuation lines) read from every file.
    pub lines: u64,
    /// Lines that became a trace event.
    pub mapped: u64,
    /// Lines recognised as protocol steps the trace does not record (barriers, alignment…).
    pub known: u64,
    /// Lines from the protocols' loggers that no rule maps: per logger, count and examples.
    pub unmapped: BTreeMap<String, Unmapped>,
    /// Lines from loggers no protocol involves, per logger.
    pub ignored: BTreeMap<String, u64>,
    /// Commit-log lines read.
    pub commits: u64,
    /// Batch output lines read.
    pub outputs: u64,
    pub events: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unmapped {
    pub count: u64,
    pub examples: Vec<String>,
}

impl ImportSummary {
    pub fn unmapped_total(&self) -> u64 {
        self.unmapped.values().map(|u| u.count).sum()
    }
    pub fn ignored_total(&self) -> u64 {
        self.ignored.values().sum()
    }
}

/// An event with where and when it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// ns since the run's first log line.
    pub time: u64,
    /// `file:line` in the run directory.
    pub src: String,
    pub event: Event,
}

/// A whole trace, as written and as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub header: Header,
    pub entries: Vec<Entry>,
    pub summary: ImportSummary,
}

impl Entry {
    fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(&self.event).expect("events serialize");
        let map = value.as_object_mut().expect("events are objects");
        map.insert("time".into(), self.time.into());
        map.insert("src".into(), self.src.clone().into());
        value
    }
}

impl Trace {
    /// Writes the trace as JSON Lines.
    pub fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer(&mut *w, &Event::Run(self.header.clone()))?;
        writeln!(w)?;
        for entry in &self.entries {
            serde_json::to_writer(&mut *w, &entry.to_json())?;
            writeln!(w)?;
        }
        serde_json::to_writer(&mut *w, &Event::ImportSummary(self.summary.clone()))?;
        writeln!(w)
    }

    /// The trace as text, exactly as `write` puts it in a file.
    pub fn to_text(&self) -> String {
        let mut bytes = Vec::new();
        self.write(&mut bytes).expect("writing to memory");
        String::from_utf8(bytes).expect("JSON is UTF-8")
    }

    /// Reads a trace file: header first, summary last, every line a known event.
    pub fn read(path: &Path) -> Result<Trace, InputError> {
        let place = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError::new(&place, format!("cannot read: {e}")))?;
        Trace::parse(&text, &place)
    }

    pub fn parse(text: &str, place: &str) -> Result<Trace, InputError> {
        let mut header = None;
        let mut summary = None;
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let at = format!("{place}:{}", i + 1);
            if summary.is_some() {
                return Err(InputError::new(at, "a line after the import_summary"));
            }
            let mut value: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| InputError::new(&at, format!("not JSON: {e}")))?;
            let obj = value
                .as_object_mut()
                .ok_or_else(|| InputError::new(&at, "not a JSON object"))?;
            let time = obj.remove("time");
            let src = obj.remove("src");
            let event: Event = serde_json::from_value(value)
                .map_err(|e| InputError::new(&at, format!("not a conformance event: {e}")))?;
            match event {
                Event::Run(h) => {
                    if i != 0 {
                        return Err(InputError::new(at, "a second run header"));
                    }
                    if h.format != FORMAT {
                        return Err(InputError::new(
                            at,
                            format!("format {:?}, expected {FORMAT:?}", h.format),
                        ));
                    }
                    header = Some(h);
                }
                _ if header.is_none() => {
                    return Err(InputError::new(at, "the first line must be the run header"));
                }
                Event::ImportSummary(s) => summary = Some(s),
                event => {
                    let time = time
                        .and_then(|t| t.as_u64())
                        .ok_or_else(|| InputError::new(&at, "no \"time\" (ns) field"))?;
                    let src = src
                        .and_then(|s| s.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    entries.push(Entry { time, src, event });
                }
            }
        }
        let header = header.ok_or_else(|| InputError::new(place, "empty trace"))?;
        let summary = summary.ok_or_else(|| {
            InputError::new(
                place,
                "no import_summary at the end: the trace is truncated",
            )
        })?;
        Ok(Trace {
            header,
            entries,
            summary,
        })
    }
}
