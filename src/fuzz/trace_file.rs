//! The JSON Lines trace file, as `flinksim run --trace` and fuzz campaigns write it: a `header`
//! object (format, version, seed, injected bug, and the scenario document itself, so the file
//! alone is enough to replay the run), one object per trace event ([`event_json`]), and an `end`
//! object with the trace hash. One writer for both, so a campaign's trace replays like any other.
//!
//! A violation gets a line of its own, `{"type":"violation","event_index":N,…}`, right after
//! event `N`, the event where its oracle first saw it, so a viewer can mark it there and a
//! reader of the file finds it beside the events that caused it.
//!
//! A file is bounded ([`DEFAULT_MAX_TRACE_BYTES`], `--max-trace-size`): past the bound the
//! events stop and a `truncated` object says how many were written of how many; the `end`
//! object still carries the hash of the *whole* trace, so a replay checks the full run anyway.

use crate::oracle::Violation;
use crate::report::{event_json, write_atomically};
use crate::run::RunReport;
use crate::scenario::Scenario;
use crate::trace::FORMAT_VERSION;
use serde_json::{json, Value};
use std::cell::Cell;
use std::io::{self, Write};
use std::path::Path;

/// The header line. `bug` is the bug actually injected (a `--bug` on the command line overrides
/// the document's), so a replay injects the same one.
pub fn header(scenario: &Scenario, seed: u64) -> Value {
    json!({
        "type": "header",
        "format": FORMAT_VERSION,
        "flinksim": env!("CARGO_PKG_VERSION"),
        "seed": seed,
        "bug": scenario.bug.map(|b| b.name()),
        "scenario": scenario.document,
    })
}

/// The last line.
pub fn end(report: &RunReport) -> Value {
    json!({
        "type": "end",
        "trace_hash": format!("{:#018x}", report.trace_hash),
        "trace_events": report.trace.len(),
        "status": report.status.name(),
    })
}

/// The default bound on a trace file: 1 GiB, about ten million events.
pub const DEFAULT_MAX_TRACE_BYTES: u64 = 1 << 30;

/// The line that replaces the events past the bound.
pub fn truncated(written: u64, report: &RunReport, max_bytes: u64) -> Value {
    json!({
        "type": "truncated",
        "events_written": written,
        "trace_events": report.trace.len(),
        "max_bytes": max_bytes,
    })
}

/// What [`write_trace`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    pub events: u64,
    /// Whether events were left out (the file bound, or the run's retention cap, was reached).
    pub truncated: bool,
}

/// A violation's line, written after the event `event_index` names.
pub fn violation(v: &Violation) -> Value {
    json!({
        "type": "violation",
        "event_index": v.event_index,
        "id": v.invariant.id(),
        "time": v.time.to_string(),
        "time_ns": v.time.as_nanos(),
        "actors": v.actors,
        "message": v.message,
    })
}

/// The lines between the header and the `end` line, given to `emit` in order: every kept
/// event, each followed by the violations first seen at it (in the order the oracles found
/// them). Before each event `stop(events written so far)` may end the events; then, or when
/// the run kept fewer events than it recorded, a `truncated` line follows, and after it the
/// violations of the events left out. The writer stops on the byte bound, `replay` where the
/// recorded file stopped, so both produce the same lines from one definition.
pub fn body(
    report: &RunReport,
    max_bytes: u64,
    mut stop: impl FnMut(u64) -> bool,
    mut emit: impl FnMut(&Value) -> io::Result<()>,
) -> io::Result<Written> {
    let mut written = Written {
        events: 0,
        truncated: report.trace.kept_events() != report.trace.len(),
    };
    let mut violations: Vec<&Violation> = report.violations.iter().collect();
    violations.sort_by_key(|v| v.event_index);
    let mut next = 0;
    for (index, time, event) in report.trace.kept() {
        if stop(written.events) {
            written.truncated = true;
            break;
        }
        emit(&event_json(&report.graph, *index, *time, event))?;
        written.events += 1;
        while let Some(v) = violations.get(next).filter(|v| v.event_index <= *index) {
            emit(&violation(v))?;
            next += 1;
        }
    }
    if written.truncated {
        emit(&truncated(written.events, report, max_bytes))?;
    }
    for v in &violations[next..] {
        emit(&violation(v))?;
    }
    Ok(written)
}

/// Counts the bytes that pass through, so the writer can stop at the bound.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    bytes: &'a Cell<u64>,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the trace of `report` (run with `Retain::Everything`) to `path`, atomically, with
/// at most about `max_bytes` of events.
pub fn write_trace(
    path: &Path,
    scenario: &Scenario,
    report: &RunReport,
    max_bytes: u64,
) -> io::Result<Written> {
    let mut written = None;
    write_atomically(path, |w| {
        let bytes = Cell::new(0);
        let mut w = Counting {
            inner: w,
            bytes: &bytes,
        };
        serde_json::to_writer(&mut w, &header(scenario, report.seed))?;
        writeln!(w)?;
        written = Some(body(
            report,
            max_bytes,
            |_| bytes.get() >= max_bytes,
            |line| {
                serde_json::to_writer(&mut w, line)?;
                writeln!(w)
            },
        )?);
        serde_json::to_writer(&mut w, &end(report))?;
        writeln!(w)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    Ok(written.expect("the body was written"))
}
