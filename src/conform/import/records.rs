//! The run's own records besides the logs: the recorder's actions (`meta.json` `events`), the
//! committed records (`commits.jsonl`) and a batch job's output (`output.jsonl`).

use super::{str_field, Importer};
use crate::conform::logline;
use crate::conform::trace::Event;
use crate::conform::InputError;
use serde_json::Value;
use std::path::Path;

/// JobManager and TaskManager faults the recorder injected (`meta.json` `events`).
pub(super) fn meta_events(
    meta: &Value,
    place: &str,
    first_ms: i64,
    order: usize,
    importer: &mut Importer,
) -> Result<(), InputError> {
    let Some(events) = meta.get("events").and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, e) in events.iter().enumerate() {
        let at = format!("{place}: events[{i}]");
        let what = str_field(e, "what", &at)?;
        let epoch_ms = epoch_ms_of(e.get("time"))
            .ok_or_else(|| InputError::new(&at, "no \"time\" (epoch ms or ISO timestamp)"))?;
        let pid = e.get("pid").and_then(Value::as_u64);
        let event = match what.as_str() {
            "kill_jobmanager" => Event::JobmasterLost { pid },
            "start_jobmanager" => Event::JobmasterStarted { pid },
            _ => Event::RecorderEvent { what, pid },
        };
        importer.summary.mapped += 1;
        importer.push(
            first_ms,
            epoch_ms,
            order,
            format!("meta.json:events[{i}]"),
            event,
        );
    }
    Ok(())
}

/// A time written as epoch ms (a number) or as an ISO timestamp (`…T…`, UTC).
fn epoch_ms_of(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => {
            let x = n.as_f64()?;
            // Seconds (with a fraction) are told from ms by size.
            Some(if x < 1e11 {
                (x * 1000.0) as i64
            } else {
                x as i64
            })
        }
        Value::String(s) => {
            let s = s.trim_end_matches('Z');
            let s = if s.len() > 23 { &s[..23] } else { s };
            let padded = match s.len() {
                19 => format!("{s}.000"),
                _ => s.replace(' ', "T"),
            };
            logline::parse_timestamp(&padded)
        }
        _ => None,
    }
}

/// One line of a recorded JSON Lines file, parsed: its number (0-based), where it is (for
/// errors), and the object.
struct Line {
    index: usize,
    at: String,
    value: Value,
}

impl Line {
    fn int(&self, name: &str) -> Result<i64, InputError> {
        self.value
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| InputError::new(&self.at, format!("no integer {name:?}")))
    }

    fn nonneg(&self, name: &str) -> Result<u64, InputError> {
        u64::try_from(self.int(name)?)
            .map_err(|_| InputError::new(&self.at, format!("{name:?} is negative")))
    }

    fn epoch_ms(&self) -> Result<i64, InputError> {
        epoch_ms_of(self.value.get("time"))
            .ok_or_else(|| InputError::new(&self.at, "no \"time\" (epoch ms)"))
    }
}

/// The lines of `dir/name`, a JSON Lines file the recorder wrote (none when it is absent);
/// a file whose last line has no end of line was cut off while being written, which is an
/// error, not a shorter run.
fn json_lines(dir: &Path, name: &str, what: &str) -> Result<Vec<Line>, InputError> {
    let path = dir.join(name);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let place = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| InputError::new(&place, format!("cannot read: {e}")))?;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(InputError::new(
            &place,
            format!("the last line has no end of line: the {what} is truncated"),
        ));
    }
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{place}:{}", index + 1);
        let value = serde_json::from_str(line)
            .map_err(|e| InputError::new(&at, format!("not JSON: {e}")))?;
        lines.push(Line { index, at, value });
    }
    Ok(lines)
}

/// `commits.jsonl`: one line per committed record, raw (re-commits kept).
pub(super) fn commits(
    dir: &Path,
    first_ms: i64,
    order: usize,
    importer: &mut Importer,
) -> Result<(), InputError> {
    for line in json_lines(dir, "commits.jsonl", "commit log")? {
        let v = &line.value;
        let event = Event::Commit {
            checkpoint: line.nonneg("checkpoint")?,
            writer: line.nonneg("writer")? as u32,
            attempt: line.nonneg("attempt")? as u32,
            seq: line.nonneg("seq")?,
            key: line.int("key")?,
            value: line.int("value")?,
            committer: v.get("committer").and_then(Value::as_u64).unwrap_or(0) as u32,
            sink: v.get("sink").and_then(Value::as_str).map(str::to_owned),
        };
        importer.summary.commits += 1;
        importer.push(
            first_ms,
            line.epoch_ms()?,
            order + line.index,
            format!("commits.jsonl:{}", line.index + 1),
            event,
        );
    }
    Ok(())
}

/// `output.jsonl` of a batch job: one line per record its sink wrote.
pub(super) fn outputs(
    dir: &Path,
    first_ms: i64,
    order: usize,
    importer: &mut Importer,
) -> Result<(), InputError> {
    for line in json_lines(dir, "output.jsonl", "output")? {
        let event = Event::Output {
            writer: line.int("writer")? as u32,
            attempt: line.int("attempt")? as u32,
            seq: line.int("seq")? as u64,
            key: line.int("key")?,
            value: line.int("value")?,
        };
        importer.summary.outputs += 1;
        importer.push(
            first_ms,
            line.epoch_ms()?,
            order + line.index,
            format!("output.jsonl:{}", line.index + 1),
            event,
        );
    }
    Ok(())
}
