//! `flinksim explain`: a finished run narrated for a person learning the protocols.
//!
//! The timeline (`render::event_line`) says *what* happened; a narration also says *why*,
//! citing the rule of `docs/rules.md` (P… or F…) that made it happen, so
//! a reader can put the design document beside the output. The "why" is reconstructed from the
//! protocol-level trace alone (`Retain::Protocol`) plus the scenario and the run report (the
//! trigger plans): the narrator keeps the little context it needs (which checkpoint a task is
//! aligning, which of its channels hold EndOfPartition, how many acknowledgements the
//! coordinator still awaits) while walking the events in order. It never influences the run.
//!
//! Key moments (a plan computed, an alignment completed, a final checkpoint, a crash, a
//! failover, a restore, the job ending) are flagged so the renderer can set them apart and
//! `--step` can pause after them.

use crate::bug::Bug;
use crate::checkpoint::stats::Outcome;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::record::{Element, StopMode};
use crate::run::RunReport;
use crate::scenario::{CheckpointMode, Delivery, FinishProtocol, Scenario};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{
    AbortReason, Call, DeclineReason, FaultEvent, SavepointRefusal, TraceEvent, TriggerFailure,
};
use anstyle::{AnsiColor, Style};
use sim::Instant;
use std::collections::BTreeMap;
use std::io::{self, Write};

mod checkpoint;
mod data;
mod lifecycle;
mod narrator;
mod repeats;
mod rpc;

use narrator::{
    address, decline_rule, element_name, refused_fates, Narrator, Recovery, TaskContext,
};
pub use repeats::Repeats;
use repeats::{split_why, WHY};

/// One narrated event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narration {
    /// The index of the trace event narrated (as in `--trace` files).
    pub index: u64,
    pub time: Instant,
    /// Who acted, named as in the timeline.
    pub actor: String,
    /// The rule cited, e.g. `P1.3 step 2`; `None` for bookkeeping that no rule governs.
    pub rule: Option<String>,
    /// What happened and why.
    pub text: String,
    /// `Some(label)` for a key moment (`plan computed`, `crash`, …).
    pub key: Option<&'static str>,
    /// Where in `text` the explanation of a routine step begins (`text[..why]` says what
    /// happened, the rest why). A reader needs the reason once: [`Repeats`] lets the writer
    /// give it the first time and only the fact afterwards.
    pub why: Option<usize>,
}

/// Narrates every protocol-level event of `report` (run with at least `Retain::Protocol`).
pub fn narrate(scenario: &Scenario, report: &RunReport) -> Vec<Narration> {
    let checkpointing = scenario.checkpointing.as_ref();
    let mut narrator = Narrator {
        graph: &report.graph,
        report,
        protocol: checkpointing.map(|c| c.finish_protocol),
        unaligned: checkpointing.is_some_and(|c| c.mode == CheckpointMode::Unaligned),
        flush_before_finish: checkpointing.is_some_and(|c| c.flush_before_finish),
        tasks: (0..report.graph.subtasks.len())
            .map(|_| TaskContext::default())
            .collect(),
        acks: BTreeMap::new(),
        retriggers: BTreeMap::new(),
        reported_at: None,
        speculated: std::collections::BTreeSet::new(),
        deployed_on: BTreeMap::new(),
        recovery: match (&scenario.batch, scenario.jobmaster.failover) {
            (_, crate::scenario::Failover::Reconcile) => Recovery::Reconcile,
            (None, crate::scenario::Failover::Restart) => Recovery::StreamingRestart,
            (Some(b), _) if b.recovery_enabled() => Recovery::BatchFlip383,
            (Some(_), _) => Recovery::BatchFullRestart,
        },
        refused_again: refused_fates(report.trace.kept()),
        index: 0,
    };
    let events = report.trace.kept();
    let mut out = Vec::with_capacity(events.len());
    for (i, (index, time, event)) in events.iter().enumerate() {
        if event.is_data() {
            continue;
        }
        // An `updateTaskExecutionState` RPC is told together with the JobMaster's view change
        // it causes, on one line.
        if let TraceEvent::Rpc { sent_at, rpc, .. } = event {
            if let Call::UpdateTaskExecutionState { state, .. } = rpc.call {
                if let Some((_, _, TraceEvent::ExecutionState { subtask, to, .. })) =
                    events.get(i + 1)
                {
                    if *subtask == rpc.subtask && *to == state {
                        narrator.reported_at = Some(*sent_at);
                        continue;
                    }
                }
            }
        }
        narrator.index = *index;
        let (actor, rule, text, key) = narrator.event(*time, event);
        let (text, why) = split_why(text);
        out.push(Narration {
            index: *index,
            time: *time,
            actor,
            rule,
            text,
            key,
            why,
        });
    }
    out
}

type Told = (String, Option<String>, String, Option<&'static str>);

fn told(actor: impl Into<String>, rule: &str, text: String) -> Told {
    let rule = (!rule.is_empty()).then(|| rule.to_owned());
    (actor.into(), rule, text, None)
}

fn key(actor: impl Into<String>, rule: &str, text: String, label: &'static str) -> Told {
    let mut t = told(actor, rule, text);
    t.3 = Some(label);
    t
}

const CC: &str = "Checkpointing";
const JM: &str = "JobMaster";

/// How narrations are written.
pub struct ExplainStyle {
    /// Emit ANSI colour codes (the caller decides from `--color`, `NO_COLOR` and the terminal).
    pub color: bool,
    /// Start each line with the trace event's number (`--numbers`), the number violations,
    /// `--trace` files and `view` use.
    pub numbers: bool,
}

/// A violation as a narration, to be told right after the event where it was first visible
/// (its own index): a key moment naming the invariant and the event.
///
/// With a bug injected (`--bug`), the line also names the rule the run departs from and how,
/// from the bug's own description: the oracle says what went wrong, the bug says which step of
/// the protocol was skipped or changed.
pub fn violation_narration(v: &crate::oracle::Violation, bug: Option<Bug>) -> Narration {
    Narration {
        index: v.event_index,
        time: v.time,
        actor: if v.actors.is_empty() {
            "oracle".to_owned()
        } else {
            v.actors.join(",")
        },
        rule: Some(v.invariant.to_string()),
        text: match bug {
            None => format!(
                "{} (violation first visible at event {})",
                v.message, v.event_index
            ),
            Some(bug) => format!(
                "{} (violation first visible at event {}); the injected bug {} departs from {}: \
                 {}",
                v.message,
                v.event_index,
                bug.name(),
                bug.rule(),
                bug.description()
            ),
        },
        key: Some("violation"),
        why: None,
    }
}

const KEY_STYLE: Style = AnsiColor::Yellow.on_default().bold();
const RULE_STYLE: Style = AnsiColor::Cyan.on_default();
const ACTOR_STYLE: Style = AnsiColor::Green.on_default();
const TIME_STYLE: Style = Style::new().dimmed();

fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_owned()
    }
}

/// Writes one narration: `time  actor  rule: text`, a key moment set apart by blank lines
/// and a `==>` marker with its label; `short` leaves out the explanation (given before).
/// `after_blank` says whether a blank line was just written (after the header, after a key
/// moment), so that key moments in a row are one blank line apart, not two.
pub fn write_narration(
    out: &mut dyn Write,
    n: &Narration,
    style: &ExplainStyle,
    short: bool,
    after_blank: bool,
) -> io::Result<()> {
    let c = style.color;
    let text = match n.why {
        Some(at) if short => &n.text[..at],
        _ => &n.text,
    };
    let time = paint(c, TIME_STYLE, &format!("{:>14}", n.time.to_string()));
    let time = if style.numbers {
        format!("{:>7}  {time}", format!("#{}", n.index))
    } else {
        time
    };
    let actor = paint(c, ACTOR_STYLE, &format!("{:<16}", n.actor));
    let rule = n
        .rule
        .as_ref()
        .map_or(String::new(), |r| format!("{}: ", paint(c, RULE_STYLE, r)));
    match n.key {
        Some(label) => {
            if !after_blank {
                writeln!(out)?;
            }
            let marker = paint(c, KEY_STYLE, &format!("==> {}", label.to_uppercase()));
            writeln!(out, "{marker}")?;
            writeln!(
                out,
                "{time}  {actor} {rule}{}",
                paint(c, Style::new().bold(), text)
            )?;
            writeln!(out)
        }
        None => writeln!(out, "{time}  {actor} {rule}{text}"),
    }
}

/// Counts narrations per rule cited, for a closing "rules seen" line.
pub fn rules_cited(narrations: &[Narration]) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for n in narrations {
        if let Some(rule) = &n.rule {
            for part in rule.split(", ") {
                *counts.entry(part).or_default() += 1;
            }
        }
    }
    // A BTreeMap iterates in rule order already.
    counts.into_iter().map(|(r, n)| (r.to_owned(), n)).collect()
}
