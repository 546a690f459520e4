//! Shrinking: a violating seed becomes the smallest scenario we can find that still violates
//! the *same* invariant (another violation would be another bug, and a smaller scenario for it
//! would explain the wrong thing), a panicking seed the smallest that still panics at the
//! *same* source location, and a seed whose run ended on a budget with no violation (a job that
//! never finished, a future that grew without bound, an event that looped) the smallest that
//! still ends on the *same* budget ([`Target`]). Every candidate run is isolated, so a candidate
//! that panics elsewhere is just a candidate that does not reproduce. Two stages:
//! 1. proptest's own shrinking over the seed's value tree (`simplify` while it still fails,
//!    `complicate` when it went too far): fewer and smaller sources, middles, sinks and faults,
//!    each number towards its simplest value;
//! 2. edits of the document that proptest cannot express, each kept only if the scenario stays
//!    valid and still fails: drop one fault, drop one vertex (its inputs feed its outputs),
//!    lower one vertex's parallelism, halve the records of a source.
//!
//! Every candidate costs one run, so both stages share one bound on runs.

use super::generate::{value_tree, GenerateOptions};
use super::isolate::isolated;
use super::{judge, run_document};
use crate::oracle::invariant::Invariant;
use crate::report::stop_id;
use crate::run::RunReport;
use crate::scenario::Scenario;
use crate::trace::Retain;
use serde_json::{json, Map, Value};
use sim::StopReason;
use std::io;
use std::path::{Path, PathBuf};

/// Runs a shrink may spend: enough for the small generated scenarios to reach a fixpoint, and a
/// cap so a slow one cannot hold a campaign up.
pub const MAX_SHRINK_RUNS: u32 = 1000;

/// A shrunk scenario: the document (as generated, no `expect` yet) and the runs it cost.
pub struct Shrunk {
    pub document: Value,
    pub runs: u32,
}

/// The size of a scenario, as the mutation score reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub vertices: usize,
    pub subtasks: u64,
    pub faults: usize,
}

impl Size {
    pub fn of(document: &Value) -> Size {
        let vertices = document["job"]["vertices"]
            .as_array()
            .map_or(&[][..], |v| v);
        Size {
            vertices: vertices.len(),
            subtasks: vertices
                .iter()
                .filter_map(|v| v["parallelism"].as_u64())
                .sum(),
            faults: document["faults"].as_array().map_or(0, |f| f.len()),
        }
    }
}

/// What a shrink preserves: one invariant's violation, or a panic at one source location.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Invariant(Invariant),
    Panic {
        location: String,
    },
    /// The run ended on this budget, with no violation: not a verdict on any rule, but a run
    /// nobody can judge to its end, which a person has to look at.
    Budget {
        stop: StopReason,
    },
}

impl std::fmt::Display for Target {
    /// The name reproducer files carry: the invariant's id, `panic`, or the budget's stop id
    /// (`time_budget`, …).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Invariant(i) => write!(f, "{i}"),
            Target::Panic { .. } => f.write_str("panic"),
            Target::Budget { stop } => f.write_str(stop_id(*stop)),
        }
    }
}

/// How a candidate runs: as its scenario says, or under the PCT scheduler a `pct` campaign
/// ran its seed with (`run_pct`: the same seed's priorities and change points on the smaller
/// scenario; the reproducer then records the order that run took, [`with_pct_schedule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    Plain,
    Pct { seed: u64, depth: u32 },
}

impl Runner {
    fn run(self, document: &Value) -> Result<(Scenario, RunReport), String> {
        match self {
            Runner::Plain => run_document(document, Retain::Nothing).map_err(|e| e.to_string()),
            Runner::Pct { seed, depth } => {
                let scenario = crate::scenario::parse(&document.to_string(), "generated")
                    .map_err(|e| e.to_string())?;
                let (report, _) = super::campaign::run_pct(&scenario, seed, depth);
                Ok((scenario, report))
            }
        }
    }
}

/// `document` with the `tie_break` that replays its run under `runner` (a PCT run's choices
/// and postponed RPCs); unchanged for [`Runner::Plain`].
pub fn with_pct_schedule(document: &Value, runner: Runner) -> Result<Value, String> {
    let Runner::Pct { seed, depth } = runner else {
        return Ok(document.clone());
    };
    let scenario =
        crate::scenario::parse(&document.to_string(), "generated").map_err(|e| e.to_string())?;
    let (_, pct) = super::campaign::run_pct(&scenario, seed, depth);
    let mut document = document.clone();
    document["tie_break"] = pct.tie_break();
    Ok(document)
}

/// Does `document` still fail as `target` when `runner` runs it? An invalid document does
/// not, nor does one that panics at another location, nor a budget run that now violates a
/// rule (that is another finding) or ends otherwise.
fn violates(document: &Value, target: &Target, runner: Runner) -> bool {
    let run = isolated(|| {
        runner
            .run(document)
            .map(|(scenario, report)| (judge(&scenario, &report).violated, report.stop))
    });
    match (run, target) {
        (Ok(Ok((violated, _))), Target::Invariant(i)) => violated.contains(i),
        (Ok(Ok((violated, stop))), Target::Budget { stop: budget }) => {
            violated.is_empty() && stop == *budget
        }
        (Err(panic), Target::Panic { location }) => panic.location == *location,
        (Ok(Err(_)), _)
        | (Ok(Ok(_)), Target::Panic { .. })
        | (Err(_), Target::Invariant(_) | Target::Budget { .. }) => false,
    }
}

/// Shrinks seed `seed`'s scenario while it fails as `target`, in at most `max_runs` runs;
/// `None` if the seed does not fail that way at all.
pub fn shrink(
    seed: u64,
    options: &GenerateOptions,
    target: &Target,
    max_runs: u32,
) -> Option<Shrunk> {
    shrink_seed(seed, options, target, max_runs, Runner::Plain)
}

/// [`shrink`], each candidate run by `runner`.
pub fn shrink_seed(
    seed: u64,
    options: &GenerateOptions,
    target: &Target,
    max_runs: u32,
    runner: Runner,
) -> Option<Shrunk> {
    let mut runs = 1;
    let mut tree = value_tree(seed, options);
    let mut best = tree.current();
    if !violates(&best, target, runner) {
        return None;
    }
    // Stage 1: proptest's loop (`TestRunner::shrink`), with our bound instead of its own.
    if tree.simplify() {
        while runs < max_runs {
            runs += 1;
            let candidate = tree.current();
            let moved = if violates(&candidate, target, runner) {
                best = candidate;
                tree.simplify()
            } else {
                tree.complicate()
            };
            if !moved {
                break;
            }
        }
    }
    Some(edit_while_failing(best, target, runs, max_runs, runner))
}

/// Shrinks a scenario document that is no generated seed (a guided campaign's mutant) while
/// it fails as `target`: stage 2 alone, in at most `max_runs` runs; `None` if it does not fail
/// that way at all.
pub fn shrink_document(
    document: &Value,
    target: &Target,
    max_runs: u32,
    runner: Runner,
) -> Option<Shrunk> {
    if !violates(document, target, runner) {
        return None;
    }
    Some(edit_while_failing(
        document.clone(),
        target,
        1,
        max_runs,
        runner,
    ))
}

/// Stage 2: edits, from the cheapest to explain, until none helps.
fn edit_while_failing(
    mut best: Value,
    target: &Target,
    mut runs: u32,
    max_runs: u32,
    runner: Runner,
) -> Shrunk {
    'improve: while runs < max_runs {
        for candidate in edits(&best) {
            if runs >= max_runs {
                break 'improve;
            }
            runs += 1;
            if violates(&candidate, target, runner) {
                best = candidate;
                continue 'improve;
            }
        }
        break;
    }
    Shrunk {
        document: best,
        runs,
    }
}

fn array<'a>(document: &'a Value, pointer: &str) -> &'a [Value] {
    document
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[][..], |a| a)
}

/// Every single edit of stage 2, in the order they are tried.
fn edits(document: &Value) -> Vec<Value> {
    let mut candidates = Vec::new();
    for i in 0..array(document, "/faults").len() {
        let mut c = document.clone();
        if let Some(faults) = c["faults"].as_array_mut() {
            faults.remove(i);
        }
        candidates.push(c);
    }
    let vertices = array(document, "/job/vertices");
    for v in vertices {
        if let Some(id) = v["id"].as_str() {
            candidates.push(without_vertex(document, id));
        }
    }
    for (i, v) in vertices.iter().enumerate() {
        let p = v["parallelism"].as_u64().unwrap_or(1);
        if p > 1 {
            let mut c = document.clone();
            let vertex = &mut c["job"]["vertices"][i];
            vertex["parallelism"] = json!(p - 1);
            if let Some(records) = vertex.get_mut("records").and_then(Value::as_array_mut) {
                records.truncate(p as usize - 1);
            }
            candidates.push(c);
        }
    }
    for (i, v) in vertices.iter().enumerate() {
        let records = array(v, "/records");
        if records.iter().any(|r| r.as_u64().unwrap_or(0) > 0) {
            let mut c = document.clone();
            c["job"]["vertices"][i]["records"] = records
                .iter()
                .map(|r| json!(r.as_u64().unwrap_or(0) / 2))
                .collect();
            candidates.push(c);
        }
    }
    candidates
}

/// `document` without vertex `id`: each of its output edges is fed by its inputs instead (an
/// input that already feeds that vertex is not added twice), and faults naming one of its
/// subtasks go with it. The result may be invalid (a source's consumer left without input);
/// [`violates`] then rejects it.
fn without_vertex(document: &Value, id: &str) -> Value {
    let mut c = document.clone();
    let edges = array(document, "/job/edges");
    let inputs: Vec<&Value> = edges.iter().filter(|e| e["to"] == id).collect();
    let mut kept: Vec<Value> = edges
        .iter()
        .filter(|e| e["to"] != id && e["from"] != id)
        .cloned()
        .collect();
    for out in edges.iter().filter(|e| e["from"] == id) {
        for input in &inputs {
            let mut edge = out.clone();
            edge["from"] = input["from"].clone();
            if !kept
                .iter()
                .any(|k| k["from"] == edge["from"] && k["to"] == edge["to"])
            {
                kept.push(edge);
            }
        }
    }
    c["job"]["edges"] = Value::Array(kept);
    if let Some(vertices) = c["job"]["vertices"].as_array_mut() {
        vertices.retain(|v| v["id"] != id);
    }
    let named = format!("\"{id}[");
    if let Some(faults) = c["faults"].as_array_mut() {
        faults.retain(|f| !f.to_string().contains(&named));
    }
    c
}

/// The reproducer file for a shrunk `document`: named after the seed and invariant, described,
/// and with an `expect` block that the run meets exactly (every violation it shows, its final
/// status and its trace hash), so `flinksim run` on it exits 0 while the violation reproduces
/// and fails the moment it stops reproducing. Returns the file's document with its parsed
/// scenario and the run's report (with the whole trace kept).
pub fn reproducer(
    document: &Value,
    seed: u64,
    target: Invariant,
) -> Result<(Value, Scenario, RunReport), String> {
    let (scenario, report) =
        run_document(document, Retain::Everything).map_err(|e| e.to_string())?;
    let message = report
        .violations
        .iter()
        .find(|v| v.invariant == target)
        .map_or(String::new(), |v| format!(": {}", v.message));
    let bug = scenario
        .bug
        .map_or(String::new(), |b| format!(" with bug `{b}` injected"));
    let mut ids: Vec<&str> = report.violations.iter().map(|v| v.invariant.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    let file = reproducer_file(
        document,
        format!("fuzz-seed-{seed}-{target}"),
        format!(
            "Found by `flinksim fuzz` at seed {seed}{bug} and shrunk while `{target}` still \
             failed{message}. `flinksim run` on this file reproduces it (the expect block \
             names the violation, so the run passes exactly while it reproduces)."
        ),
        Some(json!({
            "status": report.status.name(),
            "violations": ids,
            "trace_hash": format!("{:#018x}", report.trace_hash),
        })),
    );
    let scenario =
        crate::scenario::parse(&file.to_string(), "reproducer").map_err(|e| e.to_string())?;
    Ok((file, scenario, report))
}

/// The reproducer file for a shrunk `document` that panics: the document, named after the
/// seed, with a description that quotes the panic. It has no `expect` block and no trace: a
/// run that panics has no verdict to expect, and `flinksim run` on the file shows the panic.
fn panic_reproducer(document: &Value, seed: u64) -> Value {
    let panic = isolated(|| run_document(document, Retain::Nothing).map(|_| ()))
        .err()
        .map_or_else(|| "no longer panics".to_owned(), |p| p.to_string());
    reproducer_file(
        document,
        format!("fuzz-seed-{seed}-panic"),
        format!(
            "Found by `flinksim fuzz` at seed {seed} and shrunk while the model still \
             panicked at the same place: {panic}. A panic is a broken internal invariant, a bug \
             of the model (or of the injected bug); `flinksim run` on this file shows it."
        ),
        None,
    )
}

/// Writes `DIR/seed-<seed>-<target>.json` and, for a violation, its `.trace.jsonl`; returns the
/// scenario path.
pub fn write_reproducer(
    dir: &Path,
    document: &Value,
    seed: u64,
    target: &Target,
) -> io::Result<PathBuf> {
    let path = dir.join(format!("seed-{seed}-{target}.json"));
    let write_file = |file: &Value| {
        crate::report::write_atomically(&path, |w| {
            serde_json::to_writer_pretty(&mut *w, file)?;
            writeln!(w)
        })
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
    };
    match target {
        Target::Invariant(invariant) => {
            let (file, scenario, report) = reproducer(document, seed, *invariant)
                .map_err(|e| io::Error::other(format!("seed {seed}: shrunk scenario: {e}")))?;
            write_file(&file)?;
            super::trace_file::write_trace(
                &dir.join(format!("seed-{seed}-{target}.trace.jsonl")),
                &scenario,
                &report,
                super::trace_file::DEFAULT_MAX_TRACE_BYTES,
            )?;
        }
        Target::Panic { .. } => write_file(&panic_reproducer(document, seed))?,
        Target::Budget { stop } => {
            let file = budget_reproducer(document, seed, *stop)
                .map_err(|e| io::Error::other(format!("seed {seed}: shrunk scenario: {e}")))?;
            write_file(&file)?;
        }
    }
    Ok(path)
}

/// The reproducer of a run that ended on budget `stop`: the document, described by what was
/// still going on when it stopped (the run's diagnosis), with an expect block of its final
/// status and trace hash, so `flinksim run` on it passes exactly while it reproduces.
fn budget_reproducer(document: &Value, seed: u64, stop: StopReason) -> Result<Value, String> {
    let (_, report) = run_document(document, Retain::Nothing).map_err(|e| e.to_string())?;
    let going_on = if report.diagnosis.is_empty() {
        String::new()
    } else {
        format!(" Still going on then: {}.", report.diagnosis.join("; "))
    };
    Ok(reproducer_file(
        document,
        format!("fuzz-seed-{seed}-{}", stop_id(stop)),
        format!(
            "Found by `flinksim fuzz` at seed {seed} and shrunk while the run still ended on \
             its {} with no violation ({stop}), the job {}.{going_on} A run that cannot be \
             judged to its end may hide a job that never finishes; `flinksim run` on this file \
             reproduces it (the expect block pins the final status and the trace hash).",
            stop_id(stop),
            report.status.name(),
        ),
        Some(json!({
            "status": report.status.name(),
            "trace_hash": format!("{:#018x}", report.trace_hash),
        })),
    ))
}

/// A reproducer's file: `name` and `description` first, then the shrunk document's fields
/// (its own name, description and expect block left out), then `expect` if given.
fn reproducer_file(
    document: &Value,
    name: String,
    description: String,
    expect: Option<Value>,
) -> Value {
    let mut file = Map::new();
    file.insert("name".into(), json!(name));
    file.insert("description".into(), json!(description));
    if let Some(fields) = document.as_object() {
        for (k, v) in fields {
            if !matches!(k.as_str(), "name" | "description" | "expect") {
                file.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(expect) = expect {
        file.insert("expect".into(), expect);
    }
    Value::Object(file)
}

/// Writes `DIR/<stem>.json`, a run found by exploration rather than shrunk (`pct`,
/// `exhaustive`): `document` as it is (its `tie_break` choices replay the run), named `stem`,
/// described by `description`, with the expect block of [`reproducer`] for a violation of
/// `target`, and its `.trace.jsonl` beside it. Returns the scenario path.
pub fn write_found(
    dir: &Path,
    stem: &str,
    document: &Value,
    target: Option<Invariant>,
    description: &str,
) -> io::Result<PathBuf> {
    let path = dir.join(format!("{stem}.json"));
    let seed = document["seed"].as_u64().unwrap_or(0);
    let (mut file, trace) = match target {
        Some(invariant) => {
            let (file, scenario, report) = reproducer(document, seed, invariant)
                .map_err(|e| io::Error::other(format!("{stem}: {e}")))?;
            (file, Some((scenario, report)))
        }
        None => (document.clone(), None),
    };
    file["name"] = json!(stem);
    file["description"] = json!(description);
    crate::report::write_atomically(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &file)?;
        writeln!(w)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    if let Some((scenario, report)) = trace {
        super::trace_file::write_trace(
            &dir.join(format!("{stem}.trace.jsonl")),
            &scenario,
            &report,
            super::trace_file::DEFAULT_MAX_TRACE_BYTES,
        )?;
    }
    Ok(path)
}
