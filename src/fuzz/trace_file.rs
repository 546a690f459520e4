//! The JSON Lines trace file, as `flinksim run --trace` and fuzz campaigns write it: a `header`
//! object (format, version, seed, injected bug, and the scenario document itself, so the file
//! alone is enough to replay the run), one object per trace event ([`event_json`]), and an `end`
//! object with the trace hash. One writer for both, so a campaign's trace replays like any other.
//!
//! A file is bounded ([`DEFAULT_MAX_TRACE_BYTES`], `--max-trace-size`): past the bound the
//! events stop and a `truncated` object says how many were written of how many; the `end`
//! object still carries the hash of the *whole* trace, so a replay checks the full run anyway.

use crate::report::{event_json, write_atomically};
use crate::run::RunReport;
use crate::scenario::Scenario;
use crate::trace::FORMAT_VERSION;
use serde_json::{json, Value};
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

/// Counts the bytes that pass through, so the writer can stop at the bound.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
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
    let mut written = Written {
        events: 0,
        truncated: report.trace.kept().len() as u64 != report.trace.len(),
    };
    write_atomically(path, |w| {
        let mut w = Counting { inner: w, bytes: 0 };
        serde_json::to_writer(&mut w, &header(scenario, report.seed))?;
        writeln!(w)?;
        for (index, time, event) in report.trace.kept() {
            if w.bytes >= max_bytes {
                written.truncated = true;
                break;
            }
            serde_json::to_writer(&mut w, &event_json(&report.graph, *index, *time, event))?;
            writeln!(w)?;
            written.events += 1;
        }
        if written.truncated {
            serde_json::to_writer(&mut w, &truncated(written.events, report, max_bytes))?;
            writeln!(w)?;
        }
        serde_json::to_writer(&mut w, &end(report))?;
        writeln!(w)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    Ok(written)
}
