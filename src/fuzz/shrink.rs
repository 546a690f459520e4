//! Shrinking: a violating seed becomes the smallest scenario we can find that still violates
//! the *same* invariant (another violation would be another bug, and a smaller scenario for it
//! would explain the wrong thing). Two stages:
//! 1. proptest's own shrinking over the seed's value tree (`simplify` while it still fails,
//!    `complicate` when it went too far): fewer and smaller sources, middles, sinks and faults,
//!    each number towards its simplest value;
//! 2. edits of the document that proptest cannot express, each kept only if the scenario stays
//!    valid and still fails: drop one fault, drop one vertex (its inputs feed its outputs),
//!    lower one vertex's parallelism, halve the records of a source.
//!
//! Every candidate costs one run, so both stages share one bound on runs.

use super::generate::{value_tree, GenerateOptions};
use super::{judge, run_document};
use crate::oracle::invariant::Invariant;
use crate::run::RunReport;
use crate::scenario::Scenario;
use crate::trace::Retain;
use serde_json::{json, Map, Value};
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

/// Does `document` still violate `target`? An invalid document does not.
fn violates(document: &Value, target: Invariant) -> bool {
    match run_document(document, Retain::Nothing) {
        Ok((scenario, report)) => judge(&scenario, &report).violated.contains(&target),
        Err(_) => false,
    }
}

/// Shrinks seed `seed`'s scenario while it violates `target`, in at most `max_runs` runs;
/// `None` if the seed does not violate `target` at all.
pub fn shrink(
    seed: u64,
    options: &GenerateOptions,
    target: Invariant,
    max_runs: u32,
) -> Option<Shrunk> {
    let mut runs = 1;
    let mut tree = value_tree(seed, options);
    let mut best = tree.current();
    if !violates(&best, target) {
        return None;
    }
    // Stage 1: proptest's loop (`TestRunner::shrink`), with our bound instead of its own.
    if tree.simplify() {
        while runs < max_runs {
            runs += 1;
            let candidate = tree.current();
            let moved = if violates(&candidate, target) {
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
    // Stage 2: edits, from the cheapest to explain, until none helps.
    'improve: while runs < max_runs {
        for candidate in edits(&best) {
            if runs >= max_runs {
                break 'improve;
            }
            runs += 1;
            if violates(&candidate, target) {
                best = candidate;
                continue 'improve;
            }
        }
        break;
    }
    Some(Shrunk {
        document: best,
        runs,
    })
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
    let mut file = Map::new();
    file.insert("name".into(), json!(format!("fuzz-seed-{seed}-{target}")));
    file.insert(
        "description".into(),
        json!(format!(
            "Found by `flinksim fuzz` at seed {seed}{bug} and shrunk while `{target}` still \
             failed{message}. `flinksim run` on this file reproduces it (the expect block \
             names the violation, so the run passes exactly while it reproduces)."
        )),
    );
    if let Some(fields) = document.as_object() {
        for (k, v) in fields {
            if !matches!(k.as_str(), "name" | "description" | "expect") {
                file.insert(k.clone(), v.clone());
            }
        }
    }
    file.insert(
        "expect".into(),
        json!({
            "status": report.status.name(),
            "violations": ids,
            "trace_hash": format!("{:#018x}", report.trace_hash),
        }),
    );
    let file = Value::Object(file);
    let scenario =
        crate::scenario::parse(&file.to_string(), "reproducer").map_err(|e| e.to_string())?;
    Ok((file, scenario, report))
}

/// Writes `DIR/seed-<seed>-<invariant>.json` and its `.trace.jsonl`; returns the scenario path.
pub fn write_reproducer(
    dir: &Path,
    document: &Value,
    seed: u64,
    target: Invariant,
) -> io::Result<PathBuf> {
    let (file, scenario, report) = reproducer(document, seed, target)
        .map_err(|e| io::Error::other(format!("seed {seed}: shrunk scenario: {e}")))?;
    let path = dir.join(format!("seed-{seed}-{target}.json"));
    crate::report::write_atomically(&path, |w| {
        serde_json::to_writer_pretty(&mut *w, &file)?;
        writeln!(w)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    super::trace_file::write_trace(
        &dir.join(format!("seed-{seed}-{target}.trace.jsonl")),
        &scenario,
        &report,
    )?;
    Ok(path)
}
