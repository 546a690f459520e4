//! The conformance harness against the real Apache Flink 2.3: recorded runs of reference jobs
//! are imported into a trace in flinksim's own vocabulary (`import`), checked against the
//! model's rules (`check`), and compared with the twin scenario's outcomes (`outcomes`).
//!
//! Why a trace of our own rather than checking logs directly: Flink's log lines change between
//! versions and say one thing several ways; the trace says each protocol step once, with
//! flinksim's names (`execution_state`, `checkpoint_triggered`, `vertex[i]`), so the checker reads
//! like the model and a committed trace stays readable when the importer changes.
//!
//! The format is documented in `docs/conformance.md`.

pub mod check;
pub mod cli;
pub mod expected;
pub mod import;
mod logline;
pub mod outcomes;
pub mod trace;

use std::fmt;

/// Bad input: a file that is missing, truncated, of another Flink version or format. Always
/// names the place (file, and line when there is one), so one message tells what to fix.
#[derive(Debug)]
pub struct InputError {
    pub place: String,
    pub message: String,
}

impl InputError {
    pub fn new(place: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError {
            place: place.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.message)
    }
}

impl std::error::Error for InputError {}
