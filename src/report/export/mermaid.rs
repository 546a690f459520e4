//! A Mermaid `sequenceDiagram` of a short window: participants are the hosts, RPCs solid
//! arrows, channel elements dotted ones, protocol moments notes. A sequence diagram with
//! hundreds of arrows is unreadable (and slow to lay out), so a window with more than
//! [`MAX_MESSAGES`] messages is refused with advice on narrowing it.

use super::{
    happenings, host_rank, is_record, kind, str_field, Happening, Role, TraceFile, Window,
};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The most messages a diagram may draw.
pub const MAX_MESSAGES: usize = 150;

/// Why a window cannot be drawn.
#[derive(Debug)]
pub struct TooLarge {
    pub messages: usize,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the window holds {} messages, more than the {MAX_MESSAGES} a sequence diagram can show legibly; narrow it with --from/--to (e.g. around one checkpoint) or --actors",
            self.messages
        )
    }
}

/// Mermaid identifiers cannot contain brackets: `map[0]` becomes `map_0`, shown as `map[0]`.
fn ident(host: &str) -> String {
    host.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .trim_end_matches('_')
        .to_owned()
}

/// Mermaid treats `;` and `#` specially in message text.
fn text(label: &str) -> String {
    label.replace(';', ",").replace('#', " no. ")
}

/// Events worth a note: the protocol's moments, not bookkeeping.
fn note(h: &Happening<'_>) -> bool {
    matches!(
        kind(h.event),
        "checkpoint_triggered"
            | "checkpoint_completed"
            | "checkpoint_aborted"
            | "barrier_inserted"
            | "alignment_done"
            | "snapshot"
            | "end_of_input"
            | "retrigger"
            | "fault"
            | "failover"
            | "restore"
            | "channel_state"
            | "transaction_committed"
    ) || (kind(h.event) == "task_state" && str_field(h.event, "to") == "FINISHED")
}

pub fn export(trace: &TraceFile, window: &Window) -> Result<String, TooLarge> {
    let all = happenings(trace, window);
    // Records are messages too when the window includes them; a diagram arrow per message.
    let receipts: Vec<&Happening<'_>> = all
        .iter()
        .filter(|h| matches!(h.role, Role::Receive(_)))
        .collect();
    if receipts.len() > MAX_MESSAGES {
        return Err(TooLarge {
            messages: receipts.len(),
        });
    }
    let senders: BTreeMap<u64, &str> = all
        .iter()
        .filter_map(|h| match h.role {
            Role::Send(id) => Some((id, h.host.as_str())),
            _ => None,
        })
        .collect();
    // Participants are declared in order of first appearance.
    let mut participants: Vec<String> = Vec::new();
    let mut body = String::new();
    let add = |host: &str, participants: &mut Vec<String>| {
        if !participants.iter().any(|p| p == host) {
            participants.push(host.to_owned());
        }
    };
    for h in &all {
        match h.role {
            Role::Receive(id) => {
                let from = senders[&id];
                add(from, &mut participants);
                add(&h.host, &mut participants);
                let arrow = if kind(h.event) == "rpc" { "->>" } else { "--)" };
                let label = if kind(h.event) == "rpc" {
                    h.label.clone()
                } else if is_record(&h.event["element"]) {
                    "record".to_owned()
                } else {
                    h.label.clone()
                };
                let _ = writeln!(
                    body,
                    "    {}{arrow}{}: {}",
                    ident(from),
                    ident(&h.host),
                    text(&label)
                );
            }
            Role::Local if note(h) => {
                add(&h.host, &mut participants);
                let _ = writeln!(
                    body,
                    "    Note over {}: {} {}",
                    ident(&h.host),
                    h.event["time"].as_str().unwrap_or(""),
                    text(&h.label)
                );
            }
            Role::Send(_) | Role::Local => {}
        }
    }
    // Lifelines left to right as the system is layered: the JobMaster and its coordinator,
    // the TaskManagers, then the tasks in the job's topological order (sources first), so
    // that data arrows run left to right.
    let rank = host_rank(trace);
    let first_seen: BTreeMap<&str, usize> = participants
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut participants = participants.clone();
    participants.sort_by_key(|p| (rank(p), first_seen[p.as_str()]));
    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(
        out,
        "    %% flinksim export: scenario {}, seed {}",
        trace.header["scenario"]["name"].as_str().unwrap_or("?"),
        trace.header["seed"]
    );
    for host in &participants {
        let _ = writeln!(out, "    participant {} as {host}", ident(host));
    }
    out.push_str(&body);
    Ok(out)
}
