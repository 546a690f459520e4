//! The JSON Lines trace file, as `flinksim run --trace` and fuzz campaigns write it: a `header`
//! object (format, version, seed, injected bug, and the scenario document itself, so the file
//! alone is enough to replay the run), one object per trace event ([`event_json`]), and an `end`
//! object with the trace hash. One writer for both, so a campaign's trace replays like any other.

use crate::report::{event_json, write_atomically};
use crate::run::RunReport;
use crate::scenario::Scenario;
use crate::trace::FORMAT_VERSION;
use serde_json::{json, Value};
use std::io;
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

/// Writes the whole trace of `report` (run with `Retain::Everything`) to `path`, atomically.
pub fn write_trace(path: &Path, scenario: &Scenario, report: &RunReport) -> io::Result<()> {
    write_atomically(path, |w| {
        serde_json::to_writer(&mut *w, &header(scenario, report.seed))?;
        writeln!(w)?;
        for (index, time, event) in report.trace.kept() {
            serde_json::to_writer(&mut *w, &event_json(&report.graph, *index, *time, event))?;
            writeln!(w)?;
        }
        serde_json::to_writer(&mut *w, &end(report))?;
        writeln!(w)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}
