//! A ShiViz log (<https://bestchai.bitbucket.io/shiviz/>): one line per event with its host
//! and its vector clock, so ShiViz can draw the happened-before graph.
//!
//! The file is what ShiViz's "upload a log" expects, so it loads as is: the first line is the
//! log parsing regular expression ([`REGEX`]), the second the delimiter between executions
//! (empty: one execution), then one line per event:
//!
//! ```text
//! (?<host>\S+) (?<clock>\{[^}]*\}) (?<time>\S+) (?<event>.*)
//!
//! map[0] {"map[0]":3,"src[0]":2} 1.5ms barrier 1
//! ```
//!
//! Clocks are computed over the exported events only (window and actors applied), so each
//! host's own entry counts exactly its exported events, as ShiViz requires: a local event
//! ticks its host; a send ticks it and stamps the message; a receipt merges the message's
//! stamp into the receiver's clock, then ticks.

use super::{happenings, Role, TraceFile, Window};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// The ShiViz parsing regex for [`export`]'s lines.
pub const REGEX: &str = r"(?<host>\S+) (?<clock>\{[^}]*\}) (?<time>\S+) (?<event>.*)";

pub fn export(trace: &TraceFile, window: &Window) -> String {
    let mut clocks: HashMap<String, BTreeMap<String, u64>> = HashMap::new();
    let mut stamps: HashMap<u64, BTreeMap<String, u64>> = HashMap::new();
    // ShiViz's file format: the parsing regex, the (empty) execution delimiter, the log.
    let mut out = format!("{REGEX}\n\n");
    for h in happenings(trace, window) {
        let mut clock = clocks.remove(&h.host).unwrap_or_default();
        if let Role::Receive(id) = h.role {
            let stamp = stamps
                .remove(&id)
                .expect("happenings keep a receipt only with its send, which sorts first");
            for (host, n) in stamp {
                let mine = clock.entry(host).or_default();
                *mine = (*mine).max(n);
            }
        }
        *clock.entry(h.host.clone()).or_default() += 1;
        if let Role::Send(id) = h.role {
            stamps.insert(id, clock.clone());
        }
        let what = match h.role {
            Role::Send(_) => format!("send {}", h.label),
            Role::Receive(_) => format!("receive {}", h.label),
            Role::Local => h.label.clone(),
        };
        let time = h.event["time"].as_str().unwrap_or("");
        let time = match h.role {
            // An RPC is sent before the trace event (its arrival) is recorded.
            Role::Send(_) if h.event["type"] == "rpc" => h.event["sent_at"].as_str().unwrap_or(""),
            _ => time,
        };
        let _ = writeln!(
            out,
            "{} {} {time} {}",
            h.host,
            serde_json::to_string(&clock).expect("a map of numbers serializes"),
            what.replace('\n', " ")
        );
        clocks.insert(h.host, clock);
    }
    out
}
