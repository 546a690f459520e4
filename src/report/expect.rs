//! The verdict: does a run meet its scenario's `expect` block?

use crate::oracle::invariant::Invariant;
use crate::run::RunReport;
use crate::scenario::Expect;
use sim::StopReason;
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
            if matches!(
                report.stop,
                StopReason::EventBudget | StopReason::TimeBudget
            ) {
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
