//! Replay: re-run the scenario a trace file records in its header, with the same seed and bug,
//! and compare the new trace with the file line by line. Any difference is either a change of
//! the model since the file was written or a break of determinism; either way the first
//! divergent event, in both versions, is where to look.

use super::trace_file::{body, end, header};
use crate::bug::Bug;
use crate::run::{run, RunOptions};
use crate::scenario;
use crate::trace::{Retain, FORMAT_VERSION, OLDEST_REPLAYABLE_FORMAT};
use serde_json::Value;
use std::io;
use std::path::Path;

/// What a replay found.
#[derive(Debug, PartialEq)]
pub enum Replay {
    /// Every line is the same; `events` trace events, ending with `trace_hash`.
    Identical { events: u64, trace_hash: u64 },
    /// Line `line` (1-based, the header is line 1) differs; `None` where one trace has already
    /// ended.
    Diverged {
        line: usize,
        recorded: Option<Value>,
        replayed: Option<Value>,
    },
    /// The replayed run panicked: a broken invariant of the model as it is now.
    Panicked(super::isolate::Panic),
}

fn invalid(path: &Path, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {what}", path.display()),
    )
}

/// A trace file read back: every line, and the run its header describes.
pub struct Recorded {
    /// Every line of the file, the header first.
    pub lines: Vec<Value>,
    /// The header's scenario, with the header's bug injected.
    pub scenario: scenario::Scenario,
    pub seed: u64,
}

impl Recorded {
    /// The trace hash the file's `end` line records (of the whole run, even when the file
    /// was truncated), if it has one.
    pub fn trace_hash(&self) -> Option<u64> {
        let end = self.lines.iter().rev().find(|v| v["type"] == "end")?;
        u64::from_str_radix(end["trace_hash"].as_str()?.strip_prefix("0x")?, 16).ok()
    }
}

/// Reads the trace file at `path` and the run its header describes. An unreadable file, a
/// line that is not JSON, or a header without a valid scenario and seed is an error naming
/// the file and the line.
pub fn read(path: &Path) -> io::Result<Recorded> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display())))?;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let value: Value = serde_json::from_str(line)
            .map_err(|e| invalid(path, format_args!("line {}: not JSON: {e}", n + 1)))?;
        lines.push(value);
    }
    let head = lines
        .first()
        .filter(|h| h["type"] == "header")
        .ok_or_else(|| invalid(path, "line 1 is not a trace header"))?;
    let seed = head["seed"]
        .as_u64()
        .ok_or_else(|| invalid(path, "the header has no seed"))?;
    let mut scenario = scenario::parse(&head["scenario"].to_string(), &path.display().to_string())
        .map_err(|e| invalid(path, format_args!("the header's scenario: {e}")))?;
    // Traces written before the header named the bug carry it only in the document.
    if let Some(bug) = head.get("bug") {
        scenario.bug = match bug.as_str() {
            None => None,
            Some(name) => Some(
                Bug::from_name(name)
                    .ok_or_else(|| invalid(path, format_args!("unknown bug {name:?}")))?,
            ),
        };
    }
    Ok(Recorded {
        lines,
        scenario,
        seed,
    })
}

/// Replays the trace file at `path`. An unreadable file or header is an error; a difference
/// anywhere after it, the header's own fields included, is a [`Replay::Diverged`].
pub fn replay(path: &Path) -> io::Result<Replay> {
    let Recorded {
        lines: recorded,
        scenario,
        seed,
    } = read(path)?;
    let format = recorded[0]["format"].as_u64().unwrap_or(0);
    if format < u64::from(OLDEST_REPLAYABLE_FORMAT) || format > u64::from(FORMAT_VERSION) {
        return Err(invalid(
            path,
            format_args!(
                "written in trace format {format}; this flinksim replays formats \
                 {OLDEST_REPLAYABLE_FORMAT} to {FORMAT_VERSION}: replay it with the flinksim \
                 that wrote it (the header's \"flinksim\" field)"
            ),
        ));
    }
    // Format 2 is format 3 without the violation lines (a few builds wrote them under 2):
    // compare such a file on everything else.
    let without_violations = format < 3;
    let recorded: Vec<Value> = if without_violations {
        recorded
            .into_iter()
            .filter(|line| line["type"] != "violation")
            .collect()
    } else {
        recorded
    };
    let head = &recorded[0];
    let options = RunOptions {
        seed: Some(seed),
        retain: Retain::Everything,
        eager_sources: false,
    };
    let report = match super::isolate::isolated(|| run(&scenario, &options)) {
        Ok(report) => report,
        Err(panic) => return Ok(Replay::Panicked(panic)),
    };
    let mut replayed = vec![header(&scenario, seed)];
    if head.get("bug").is_none() {
        // Compare like with like: an older header without the field.
        if let Some(h) = replayed[0].as_object_mut() {
            h.remove("bug");
        }
    }
    // Each event is followed by the violations first seen at it. A bounded file (`truncated`
    // after its events) is compared on the events it kept; its `end` line still holds the
    // whole trace's hash, so the full run is checked all the same.
    let cut = recorded.iter().find(|v| v["type"] == "truncated").map(|t| {
        (
            t["events_written"].as_u64(),
            t["max_bytes"].as_u64().unwrap_or(0),
        )
    });
    let (kept, max_bytes) = match cut {
        Some((kept, max_bytes)) => (kept.unwrap_or(0), max_bytes),
        None => (u64::MAX, 0),
    };
    body(
        &report,
        max_bytes,
        |events| events >= kept,
        |line| {
            if !(without_violations && line["type"] == "violation") {
                replayed.push(line.clone());
            }
            Ok(())
        },
    )?;
    replayed.push(end(&report));
    // The version that wrote the file may differ; that alone is no divergence.
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("flinksim");
            o.remove("format");
        }
        v
    };
    let same = |a: &Value, b: &Value| {
        if a["type"] == "header" {
            strip(a) == strip(b)
        } else {
            a == b
        }
    };
    if let Some(line) = crate::compare::first_divergence(&recorded, &replayed, same) {
        return Ok(Replay::Diverged {
            line: line + 1,
            recorded: recorded.get(line).cloned(),
            replayed: replayed.get(line).cloned(),
        });
    }
    Ok(Replay::Identical {
        events: report.trace.len(),
        trace_hash: report.trace_hash,
    })
}
