//! Differential outcomes: the twin scenario run over a range of seeds, its timing-independent
//! outcomes beside the real run's, and the ranges of what varies with timing.

use super::check::Outcomes;
use crate::checkpoint::stats::Outcome;
use crate::run::{run, RunOptions};
use crate::scenario::Scenario;
use crate::status::ExecutionState;
use crate::trace::{Retain, TraceEvent};
use std::collections::BTreeMap;

/// The twin's outcomes for one seed, and how long the run took (wall clock).
pub struct TwinRun {
    pub seed: u64,
    pub outcomes: Outcomes,
    pub wall_ns: u128,
}

/// Runs the twin once per seed.
pub fn run_twin(scenario: &Scenario, seeds: std::ops::Range<u64>) -> Vec<TwinRun> {
    seeds
        .map(|seed| {
            let started = std::time::Instant::now();
            let report = run(
                scenario,
                &RunOptions {
                    seed: Some(seed),
                    retain: Retain::Protocol,
                    eager_sources: false,
                },
            );
            let wall_ns = started.elapsed().as_nanos();
            let g = &report.graph;
            let name = |s| g.subtask_name(s).to_string();
            let mut o = Outcomes {
                status: report.status.name().to_owned(),
                committed: Some(report.committed_records),
                committed_raw: None,
                ..Outcomes::default()
            };
            for f in &report.failovers {
                o.regions_restarted
                    .push(f.restarted.iter().map(|&s| name(s)).collect());
                for &s in &f.kept_finished {
                    let n = name(s);
                    if !o.finished_on_restore.contains(&n) {
                        o.finished_on_restore.push(n);
                    }
                }
            }
            if let Some(batch) = &report.batch {
                if let Some(r) = batch.recoveries.first() {
                    o.late_reports = u64::from(r.late_reports);
                    let rerun: Vec<String> = r.rerun.iter().map(|(s, _)| name(*s)).collect();
                    o.kept = r
                        .recovered
                        .iter()
                        .map(|&s| name(s))
                        .filter(|n| !rerun.contains(n))
                        .collect();
                    // Only the subtasks of the decided parallelism exist (P2.1).
                    let decided = |v: &str| {
                        batch
                            .parallelism
                            .iter()
                            .find(|(id, _)| id == v)
                            .and_then(|(_, p)| *p)
                    };
                    let mut all_rerun: Vec<String> = (0..g.subtasks.len() as u32)
                        .map(crate::graph::SubtaskId)
                        .filter(|&s| {
                            let v = g.vertex_of(s);
                            let index = s.0 - v.first;
                            decided(&v.name).is_some_and(|p| index < p)
                        })
                        .map(name)
                        .filter(|n| !o.kept.contains(n))
                        .collect();
                    all_rerun.sort();
                    o.rerun = all_rerun;
                }
            }
            let first_source_finished = report.trace.kept().iter().find_map(|&(_, t, e)| match e {
                TraceEvent::ExecutionState {
                    subtask,
                    to: ExecutionState::Finished,
                    ..
                } if g.vertex_of(subtask).inputs.is_empty() => Some(t),
                _ => None,
            });
            if report.batch.is_none() {
                o.checkpoint_after_first_source_finished = first_source_finished.map(|f| {
                    report
                        .checkpoints
                        .iter()
                        .any(|c| matches!(c.outcome, Outcome::Completed(t) if t > f))
                });
            }
            o.checkpoints_triggered = report.checkpoints.len() as u64;
            o.checkpoints_completed = report.completed_checkpoints();
            for c in &report.checkpoints {
                if let Outcome::Aborted(_, reason) = c.outcome {
                    *o.failures.entry(reason.id().to_owned()).or_default() += 1;
                }
            }
            TwinRun {
                seed,
                outcomes: o,
                wall_ns,
            }
        })
        .collect()
}

/// One row of the side-by-side table: the real value, the twin's values over the seeds (with
/// how many seeds gave each), and whether they agree (every seed gives the real value).
pub struct Row {
    pub what: &'static str,
    pub real: String,
    pub twin: BTreeMap<String, u64>,
    /// `None` for a row that varies with timing (shown as a range, not compared).
    pub agrees: Option<bool>,
}

/// Subtasks counted per vertex (`src 3, map 1`): which subtask of a vertex ran on the
/// TaskManager that was lost depends on placement, how many did not.
fn per_vertex(v: &[String]) -> String {
    let mut counts: Vec<(String, u32)> = Vec::new();
    for s in v {
        let vertex = s.split('[').next().unwrap_or(s).to_owned();
        match counts.iter_mut().find(|(n, _)| *n == vertex) {
            Some((_, c)) => *c += 1,
            None => counts.push((vertex, 1)),
        }
    }
    counts.sort();
    let parts: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
    format!("[{}]", parts.join(", "))
}

fn list(v: &[String]) -> String {
    let mut v = v.to_vec();
    v.sort();
    format!("[{}]", v.join(", "))
}

/// The rows: timing-independent outcomes first (compared), then what varies (ranges).
pub fn rows(real: &Outcomes, twins: &[TwinRun], batch: bool) -> Vec<Row> {
    type Get = fn(&Outcomes) -> String;
    let mut compared: Vec<(&'static str, Get)> = vec![("job status", |o| o.status.clone())];
    if batch {
        compared.push(("kept after JM crash (per vertex)", |o| per_vertex(&o.kept)));
        compared.push(("re-run after JM crash (per vertex)", |o| {
            per_vertex(&o.rerun)
        }));
    } else {
        compared.push(("committed after dedup", |o| {
            o.committed.map_or("-".into(), |n| n.to_string())
        }));
        compared.push(("regions restarted", |o| {
            let r: Vec<String> = o.regions_restarted.iter().map(|r| list(r)).collect();
            format!("[{}]", r.join(" "))
        }));
        compared.push(("finished on restore", |o| list(&o.finished_on_restore)));
        compared.push(("checkpoint after 1st source finished", |o| {
            o.checkpoint_after_first_source_finished
                .map_or("-".into(), |b| b.to_string())
        }));
    }
    let mut out = Vec::new();
    for (what, get) in compared {
        let real_v = get(real);
        let mut twin = BTreeMap::new();
        for t in twins {
            *twin.entry(get(&t.outcomes)).or_default() += 1;
        }
        let agrees = Some(twin.len() == 1 && twin.contains_key(&real_v));
        out.push(Row {
            what,
            real: real_v,
            twin,
            agrees,
        });
    }
    let range = |v: Vec<u64>| match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}..{b}"),
        _ => "-".into(),
    };
    if batch {
        let late: Vec<u64> = twins.iter().map(|t| t.outcomes.late_reports).collect();
        out.push(Row {
            what: "late partition reports (released)",
            real: real.late_reports.to_string(),
            twin: BTreeMap::from([(range(late), twins.len() as u64)]),
            agrees: None,
        });
    }
    if !batch {
        let counts = |get: fn(&Outcomes) -> u64| -> BTreeMap<String, u64> {
            let mut m = BTreeMap::new();
            m.insert(
                range(twins.iter().map(|t| get(&t.outcomes)).collect()),
                twins.len() as u64,
            );
            m
        };
        out.push(Row {
            what: "checkpoints triggered",
            real: real.checkpoints_triggered.to_string(),
            twin: counts(|o| o.checkpoints_triggered),
            agrees: None,
        });
        out.push(Row {
            what: "checkpoints completed",
            real: real.checkpoints_completed.to_string(),
            twin: counts(|o| o.checkpoints_completed),
            agrees: None,
        });
        let reasons = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut twin_reasons: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for t in twins {
            for (k, v) in &t.outcomes.failures {
                twin_reasons.entry(k.clone()).or_default().push(*v);
            }
        }
        let twin_text = twin_reasons
            .into_iter()
            .map(|(k, mut v)| {
                v.resize(twins.len(), 0);
                format!("{k} {}", range(v))
            })
            .collect::<Vec<_>>()
            .join(", ");
        out.push(Row {
            what: "declines (real) / aborts by reason",
            real: format!(
                "declines: {}; failed: {}",
                reasons(&real.declines),
                reasons(&real.failures)
            ),
            twin: BTreeMap::from([(twin_text, twins.len() as u64)]),
            agrees: None,
        });
    }
    out
}
