//! The verdict: does a run meet its scenario's `expect` block?

use crate::checkpoint::stats::Outcome;
use crate::oracle::invariant::Invariant;
use crate::run::RunReport;
use crate::scenario::{CheckpointOutcome, Expect};
use std::collections::BTreeSet;

/// Every way the run differs from what the scenario expects; empty means the run is as
/// expected. A run that hit its budget fails unless the scenario expects the job to be still
/// running then (a non-terminal `status`).
pub fn check_expectations(expect: &Expect, report: &RunReport) -> Vec<String> {
    let mut failures = Vec::new();
    match expect.status {
        Some(status) if status != report.status => failures.push(format!(
            "expected the job to end {status}, but it is {}",
            report.status
        )),
        Some(status) if !status.is_terminal() => {}
        _ => {
            if report.stop.is_budget() {
                failures.push(format!(
                    "the run hit its budget ({}) with the job {}",
                    report.stop, report.status
                ));
            }
        }
    }
    let expected: BTreeSet<Invariant> = expect.violations.iter().copied().collect();
    let found: BTreeSet<Invariant> = report.violations.iter().map(|v| v.invariant).collect();
    for missing in expected.difference(&found) {
        failures.push(format!(
            "expected a `{missing}` violation, but none was found"
        ));
    }
    for v in &report.violations {
        if !expected.contains(&v.invariant) {
            failures.push(format!("`{}` violated: {}", v.invariant, v.message));
        }
    }
    if let Some(n) = expect.sink_records {
        if n != report.sink_records() {
            failures.push(format!(
                "expected {n} sink records in all, got {}",
                report.sink_records()
            ));
        }
    }
    for (sink, &n) in &expect.sinks {
        let got = report
            .sinks
            .iter()
            .find(|(name, _)| name == sink)
            .map_or(0, |(_, count)| *count);
        if got != n {
            failures.push(format!(
                "expected sink {sink} to receive {n} records, got {got}"
            ));
        }
    }
    check_checkpoints(expect, report, &mut failures);
    if let Some(hash) = expect.trace_hash {
        if hash != report.trace_hash {
            failures.push(format!(
                "expected trace hash {hash:#018x}, got {:#018x}",
                report.trace_hash
            ));
        }
    }
    failures
}

fn check_checkpoints(expect: &Expect, report: &RunReport, failures: &mut Vec<String>) {
    let count = |name: &str, want: Option<u64>, got: u64, failures: &mut Vec<String>| {
        if let Some(want) = want.filter(|&w| w != got) {
            failures.push(format!("expected {want} {name}, got {got}"));
        }
    };
    count(
        "completed checkpoints",
        expect.completed_checkpoints,
        report.completed_checkpoints(),
        failures,
    );
    count(
        "re-trigger RPCs",
        expect.retrigger_rpcs,
        report.retrigger_rpcs(),
        failures,
    );
    // A batch job's failovers (a failed task, a lost TaskManager: P2.4 step 4) are counted by
    // its JobMaster; a streaming job's are the restores of `report.failovers`.
    let batch_failovers = report.batch.as_ref().map_or(0, |f| u64::from(f.failovers));
    count(
        "failovers",
        expect.failovers,
        report.failovers.len() as u64 + batch_failovers,
        failures,
    );
    super::batch::check_batch(expect, report, failures);
    if let Some(want) = &expect.reconciliations {
        let got: Vec<_> = report.reconciliations.iter().map(|r| r.outcome).collect();
        let want: Vec<_> = want.iter().map(|&o| Some(o)).collect();
        if got != want {
            let show = |list: &[Option<crate::trace::ReconcileOutcome>]| {
                list.iter()
                    .map(|o| o.map_or("still open".to_owned(), |o| o.name().to_owned()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            failures.push(format!(
                "expected reconciliations [{}], got [{}]",
                show(&want),
                show(&got)
            ));
        }
    }
    // P3.3: what TaskManagers kept while no JobMaster was reachable, and sent again.
    count("kept RPCs", expect.rpcs_kept, report.rpcs_kept, failures);
    count(
        "resent RPCs",
        expect.rpcs_resent,
        report.rpcs_resent,
        failures,
    );
    if let Some(want) = &expect.restores {
        check_restores(want, report, failures);
    }
    count(
        "committed records",
        expect.committed_records,
        report.committed_records,
        failures,
    );
    let graph = &report.graph;
    let names = |subtasks: &[crate::graph::SubtaskId]| -> BTreeSet<String> {
        subtasks
            .iter()
            .map(|&s| graph.subtask_name(s).to_string())
            .collect()
    };
    for want in &expect.checkpoints {
        let id = want.id;
        let Some(got) = report.checkpoints.iter().find(|c| c.id == id) else {
            if want.outcome != Some(CheckpointOutcome::NeverTriggered) {
                failures.push(format!(
                    "expected checkpoint {id}, but it was never triggered"
                ));
            }
            continue;
        };
        let (outcome, reason) = match got.outcome {
            Outcome::Completed(_) => (CheckpointOutcome::Completed, None),
            Outcome::Aborted(_, reason) => (CheckpointOutcome::Aborted, Some(reason.id())),
            Outcome::Pending => (CheckpointOutcome::NeverTriggered, None),
        };
        match want.outcome {
            Some(CheckpointOutcome::NeverTriggered) => {
                failures.push(format!(
                    "expected checkpoint {id} never to be triggered, but it was"
                ));
            }
            Some(w) if w != outcome || got.outcome == Outcome::Pending => failures.push(format!(
                "expected checkpoint {id} to be {w:?}, but it is {}",
                outcome_text(got.outcome)
            )),
            _ => {}
        }
        if let Some(want_reason) = &want.abort_reason {
            if reason != Some(want_reason.as_str()) {
                failures.push(format!(
                    "expected checkpoint {id} aborted with reason {want_reason}, but it is {}",
                    outcome_text(got.outcome)
                ));
            }
        }
        let duration = match got.outcome {
            Outcome::Completed(at) => Some(at - got.triggered_at),
            _ => None,
        };
        if want.duration_at_least.is_some() || want.duration_at_most.is_some() {
            match duration {
                None => failures.push(format!(
                    "expected checkpoint {id} to complete within duration bounds, but it is {}",
                    outcome_text(got.outcome)
                )),
                Some(d) => {
                    if want.duration_at_least.is_some_and(|min| d < min) {
                        failures.push(format!(
                            "expected checkpoint {id} to take at least {}, it took {d}",
                            want.duration_at_least.expect("checked")
                        ));
                    }
                    if want.duration_at_most.is_some_and(|max| d > max) {
                        failures.push(format!(
                            "expected checkpoint {id} to take at most {}, it took {d}",
                            want.duration_at_most.expect("checked")
                        ));
                    }
                }
            }
        }
        let state = got.input_state_records + got.output_state_records;
        if want.channel_state_at_least.is_some_and(|min| state < min) {
            failures.push(format!(
                "expected checkpoint {id} to persist at least {} records of channel state, it persisted {state}",
                want.channel_state_at_least.expect("checked")
            ));
        }
        if want.channel_state_at_most.is_some_and(|max| state > max) {
            failures.push(format!(
                "expected checkpoint {id} to persist at most {} records of channel state, it persisted {state}",
                want.channel_state_at_most.expect("checked")
            ));
        }
        let sets = [
            ("triggered", &want.triggered, names(&got.plan.to_trigger)),
            ("finished", &want.finished, names(&got.plan.finished)),
            (
                "fully_finished",
                &want.fully_finished,
                got.plan
                    .fully_finished
                    .iter()
                    .map(|v| graph.vertices[v.index()].name.clone())
                    .collect(),
            ),
        ];
        for (what, want_set, got_set) in sets {
            if let Some(want_set) = want_set {
                let want_set: BTreeSet<String> = want_set.iter().cloned().collect();
                if want_set != got_set {
                    failures.push(format!(
                        "expected checkpoint {id}'s plan to have {what} {want_set:?}, got {got_set:?}"
                    ));
                }
            }
        }
    }
}

fn outcome_text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Pending => "still pending".to_owned(),
        Outcome::Completed(at) => format!("completed at {at}"),
        Outcome::Aborted(at, reason) => format!("aborted at {at} ({})", reason.id()),
    }
}

/// `expect.restores`: the failovers that restored, in order, each in the fields it gives.
fn check_restores(
    want: &[crate::scenario::ExpectedRestore],
    report: &RunReport,
    failures: &mut Vec<String>,
) {
    use crate::scenario::RestoreScope;
    let graph = &report.graph;
    let restored: Vec<_> = report
        .failovers
        .iter()
        .filter(|f| f.restored_at.is_some())
        .collect();
    if restored.len() != want.len() {
        failures.push(format!(
            "expected {} restore(s), got {}",
            want.len(),
            restored.len()
        ));
    }
    let names = |subtasks: &[crate::graph::SubtaskId]| -> Vec<String> {
        let mut names: Vec<String> = subtasks
            .iter()
            .map(|&s| graph.subtask_name(s).to_string())
            .collect();
        names.sort();
        names
    };
    for (i, (w, got)) in want.iter().zip(&restored).enumerate() {
        let mut differ = |what: &str, want: String, got: String| {
            if want != got {
                failures.push(format!("restore {i}: expected {what} {want}, got {got}"));
            }
        };
        if let Some(c) = w.checkpoint {
            differ(
                "checkpoint",
                c.to_string(),
                got.restored_checkpoint.unwrap_or(0).to_string(),
            );
        }
        if let Some(scope) = w.scope {
            let name = |full: bool| if full { "full" } else { "region" }.to_owned();
            differ("scope", name(scope == RestoreScope::Full), name(got.full));
        }
        if let Some(list) = &w.restarted {
            differ(
                "restarted",
                format!("{list:?}"),
                format!("{:?}", names(&got.restarted)),
            );
        }
        if let Some(list) = &w.finished {
            differ(
                "finished on restore",
                format!("{list:?}"),
                format!("{:?}", names(&got.kept_finished)),
            );
        }
        if let Some(n) = w.records_replayed {
            differ(
                "records replayed",
                n.to_string(),
                got.records_replayed.to_string(),
            );
        }
    }
}
