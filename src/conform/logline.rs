//! Reading Flink's log files: the log4j2 pattern the reference jobs use,
//! `%d{yyyy-MM-dd'T'HH:mm:ss.SSS} %-5level [%t] %logger - %msg%n`, where a message's further
//! lines (stack traces, multi-line messages) follow on lines that do not start with a
//! timestamp. Files may be gzip'd (`.log.gz`).

use super::InputError;
use std::io::Read;
use std::path::Path;

/// One log record: its first line and any continuation lines.
#[derive(Clone, Debug)]
pub struct LogLine {
    /// ms since the Unix epoch (the log's local time, read as UTC: the recorder runs in UTC).
    pub epoch_ms: i64,
    pub logger: String,
    /// The first line of the message.
    pub message: String,
    /// Continuation lines, joined with `\n` (empty if none).
    pub more: String,
    /// 1-based line number of the first line in its file.
    pub line: usize,
}

/// Reads a log file whole, gunzipping `.gz`.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let place = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| InputError::new(&place, format!("cannot read: {e}")))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .map_err(|e| {
                InputError::new(
                    &place,
                    format!("not a complete gzip'd text file (truncated?): {e}"),
                )
            })?;
        Ok(text)
    } else {
        String::from_utf8(bytes).map_err(|_| InputError::new(&place, "not UTF-8 text"))
    }
}

/// Splits a log's text into records. A first line that is not in the expected pattern is an
/// error (another format, or not a Flink log); so is a file whose last line is cut off.
pub fn parse(text: &str, place: &str) -> Result<Vec<LogLine>, InputError> {
    let mut out: Vec<LogLine> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        match parse_first_line(raw) {
            Some((epoch_ms, logger, message)) => out.push(LogLine {
                epoch_ms,
                logger: logger.to_owned(),
                message: message.to_owned(),
                more: String::new(),
                line: n,
            }),
            None => match out.last_mut() {
                Some(last) => {
                    if !last.more.is_empty() {
                        last.more.push('\n');
                    }
                    last.more.push_str(raw);
                }
                None => {
                    return Err(InputError::new(
                        format!("{place}:{n}"),
                        format!(
                            "not a log line in the expected log4j2 pattern \
                             (`yyyy-MM-ddTHH:mm:ss.SSS LEVEL [thread] logger - message`): {}",
                            shorten(raw, 120)
                        ),
                    ))
                }
            },
        }
    }
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(InputError::new(
            format!("{place}:{}", text.lines().count()),
            "the last line has no end of line: the log is truncated",
        ));
    }
    Ok(out)
}

/// `(epoch_ms, logger, message)` of a first line, or `None`.
fn parse_first_line(raw: &str) -> Option<(i64, &str, &str)> {
    let ts = raw.get(..23)?;
    let epoch_ms = parse_timestamp(ts)?;
    let rest = raw.get(23..)?.strip_prefix(' ')?;
    let (level, rest) = rest.split_once(' ')?;
    if !matches!(
        level,
        "TRACE" | "DEBUG" | "INFO" | "WARN" | "ERROR" | "FATAL"
    ) {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('[')?;
    // Thread names may contain spaces and brackets; the logger follows the last "] ".
    let close = rest.find("] ")?;
    let rest = &rest[close + 2..];
    let (logger, message) = rest.split_once(" - ").unwrap_or((rest, ""));
    if logger.contains(' ') {
        return None;
    }
    Some((epoch_ms, logger, message))
}

/// `yyyy-MM-ddTHH:mm:ss.SSS` as ms since the epoch (UTC).
pub fn parse_timestamp(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() != 23 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = ts.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_as_utc() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:01.234"), Some(1234));
        assert_eq!(
            parse_timestamp("2026-12-01T09:46:56.000"),
            Some(1_796_118_416_000)
        );
        assert_eq!(parse_timestamp("2026-12-01 09:46:56,000"), None);
    }

    #[test]
    fn continuation_lines_join_their_record() {
        let text = "2026-12-01T09:00:00.000 INFO  [main] a.B - first\n  at x\n  at y\n\
                    2026-12-01T09:00:00.005 DEBUG [pool-1 thread] c.D - second\n";
        let lines = parse(text, "f.log").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].more, "  at x\n  at y");
        assert_eq!(lines[1].logger, "c.D");
        assert_eq!(lines[1].epoch_ms - lines[0].epoch_ms, 5);
        assert!(parse("hello\n", "f.log").is_err());
        assert!(parse("2026-12-01T09:00:00.000 INFO  [main] a.B - cut", "f.log").is_err());
    }
}
