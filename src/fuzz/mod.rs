//! Fuzz campaigns: many generated scenarios, each judged by every oracle; a violation is shrunk
//! to a small scenario file that reproduces it, with its trace (`architecture.md`, `src/fuzz/`).
//!
//! Everything here is a pure function of the campaign's seeds and options: a seed's scenario,
//! run and verdict never depend on the thread that ran it, the shard it belongs to or the wall
//! clock, so results can be compared across `--threads` values and merged across machines. Only
//! *which* seeds a campaign gets to is wall-clock dependent, and only under `--time-limit`.
//!
//! Module map:
//! - [`generate`]: the proptest strategy, `seed -> scenario document`.
//! - [`batch_gen`]: the batch part of it (P2), shared with the batch property test.
//! - [`campaign`]: a range of seeds across threads, their verdicts and JSON Lines records.
//! - [`coverage`]: which coverage probes (`crate::probes`) a campaign's runs hit.
//! - [`guided`]: the feedback strategy: a corpus of inputs that reached new coverage, mutated.
//! - [`header`]: the first line of `results.jsonl`, the build and parameters of the campaign.
//! - [`merge`]: the shards of a campaign joined into the whole campaign's `results.jsonl`.
//! - [`strategy`]: how a campaign explores: `random`, `pct` (a priority scheduler with a
//!   probability bound per run), `exhaustive` ([`exhaustive`]), `guided` ([`guided`]) or
//!   `swarm` ([`swarm`]).
//! - [`swarm`]: swarm testing: each seed's configuration switches the generator's optional
//!   features on or off.
//! - [`exhaustive`]: every class of same-instant orders of one small scenario, under a few
//!   fixed latencies: a certificate, or the first counterexample.
//! - [`shrink`]: a violating seed to a minimal scenario still violating the same invariant.
//! - [`trace_file`]: the JSON Lines trace `flinksim run --trace` writes, and [`replay`] of one.
//! - [`hunt`]: runs to the first failure per strategy, injected bug and source mutant.
//! - [`mutants`]: the mutation score: how soon a campaign catches each injected bug.
//! - [`isolate`]: every run behind `catch_unwind`, so a model panic is a result, not a crash.

pub mod batch_gen;
pub mod campaign;
pub mod coverage;
pub mod exhaustive;
pub mod generate;
pub mod guided;
pub mod header;
pub mod hunt;
pub mod isolate;
pub mod merge;
pub mod mutants;
pub mod replay;
pub mod shrink;
pub mod strategy;
pub mod swarm;
pub mod trace_file;

use crate::oracle::invariant::Invariant;
use crate::run::{run, RunOptions, RunReport};
use crate::scenario::{self, Delivery, FinishProtocol, Scenario, ScenarioError};
use crate::trace::Retain;
use serde_json::Value;
use std::collections::BTreeSet;

/// How one run ended, as campaigns count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// No violation the scenario does not expect.
    Ok,
    /// At least one invariant was violated unexpectedly.
    Violation,
    /// No violation, but the run ended on one of its budgets: events, time, or pending
    /// events (the oracles judged it, `job-terminates` included, and found nothing; the run
    /// was just long, or its future grew without bound; the result's `stop` says which).
    Budget,
    /// The model panicked: an internal invariant broke. The result carries the panic's
    /// location and message ([`isolate::Panic`]).
    Panic,
}

impl Outcome {
    pub fn id(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Violation => "violation",
            Outcome::Budget => "budget",
            Outcome::Panic => "panic",
        }
    }
}

/// The verdict on one run: its outcome and the invariants it violated unexpectedly, each once,
/// in [`Invariant::ALL`] order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub violated: Vec<Invariant>,
}

/// Judges a run of `scenario`. One violation is expected rather than a failure: under `legacy`,
/// a two-phase-commit sink never commits its last transaction, because no checkpoint is
/// triggered once a task finished (P1.7). That shows as `exactly-once-output` "never committed"
/// on two-phase-commit sinks only; anything else, a duplicate included, is a failure.
pub fn judge(scenario: &Scenario, report: &RunReport) -> Verdict {
    let legacy = scenario
        .checkpointing
        .as_ref()
        .is_some_and(|c| c.finish_protocol == FinishProtocol::Legacy);
    let two_phase_commit: BTreeSet<&str> = scenario
        .job
        .vertices
        .iter()
        .filter(|v| v.chain.sink() == Some(Delivery::TwoPhaseCommit))
        .map(|v| v.id.as_str())
        .collect();
    let violated: BTreeSet<Invariant> = report
        .violations
        .iter()
        .filter(|v| {
            let expected = legacy
                && v.invariant == Invariant::ExactlyOnceOutput
                && v.message.contains("never committed")
                && v.actors
                    .iter()
                    .all(|a| two_phase_commit.contains(a.as_str()));
            !expected
        })
        .map(|v| v.invariant)
        .collect();
    let outcome = if !violated.is_empty() {
        Outcome::Violation
    } else if report.stop.is_budget() {
        Outcome::Budget
    } else {
        Outcome::Ok
    };
    Verdict {
        outcome,
        violated: violated.into_iter().collect(),
    }
}

/// Parses a generated document and runs it.
pub fn run_document(
    document: &Value,
    retain: Retain,
) -> Result<(Scenario, RunReport), ScenarioError> {
    let scenario = scenario::parse(&document.to_string(), "generated")?;
    let report = run(
        &scenario,
        &RunOptions {
            seed: None,
            retain,
            eager_sources: false,
        },
    );
    Ok((scenario, report))
}

/// 64-bit FNV-1a: a fixed, documented hash, stable across Rust versions and machines.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The hash of a scenario document: FNV-1a of its canonical JSON (object keys sorted at every
/// level, no whitespace), so two documents that mean the same hash the same whatever their key
/// order.
pub fn scenario_hash(document: &Value) -> u64 {
    fnv1a(canonical(document).to_string().as_bytes())
}

fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Applies `f` to every item on `threads` scoped threads and returns the results in item order,
/// so what a caller prints or writes never depends on the thread count. Each item runs on one
/// thread from start to end; `keep_going` is asked before an item is started, and an item it
/// refuses has no result (`None`).
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    keep_going: impl Fn() -> bool + Sync,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                if !keep_going() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { return };
                let result = f(item);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}
