//! Batch execution and job recovery after a JobManager crash (P2, FLIP-383).
//!
//! Module map:
//! - `data`: splits, fragments, and how a blocking partition is divided among consumers.
//! - `coordinator`: the source split enumerator and its batch snapshot (P2.5).
//! - `events`: the job event store, its write buffer, and replay (P2.2, F2.3).
//! - `recovery`: P2.4's steps as pure functions (shared by crash recovery and failover).
//! - `world`: the actors (JobMaster, TaskManagers, remote shuffle) and event dispatch.
//! - `oracle`: `exactly-once-output`, `minimal-rerun`, `legal-transition` for batch.
//! - `trace`: the batch trace events.

pub mod data;
pub mod events;
pub mod oracle;
pub mod recovery;
pub mod world;

use crate::oracle::invariant::Invariant;
use crate::oracle::Violation;
use crate::run::{RunOptions, RunReport};
use crate::scenario::{Scenario, TieBreak};
use sim::{Budget, Duration, Instant, Simulation, StopReason};
pub use world::RecoveryRecord;

/// The batch figures of a run (P2.4), for the summary.
#[derive(Clone, Debug, Default)]
pub struct BatchFigures {
    /// Per vertex, in file order: its decided (or fixed) parallelism, if it was initialized.
    pub parallelism: Vec<(String, Option<u32>)>,
    pub recoveries: Vec<RecoveryRecord>,
    /// Failovers of the running job (task failures, lost TaskManagers, missing partitions).
    pub failovers: u32,
    /// When the job finished, if it did.
    pub finished_at: Option<Instant>,
    /// P2.8: per speculative attempt, its subtask and whether it finished first.
    pub speculative: Vec<(String, bool)>,
}

impl BatchFigures {
    pub fn redone(&self) -> Duration {
        self.recoveries
            .iter()
            .fold(Duration::ZERO, |a, r| a + r.redone)
    }
}

/// Runs a batch scenario to completion or to its budget.
pub fn run(scenario: &Scenario, options: &RunOptions) -> RunReport {
    let seed = options.seed.unwrap_or(scenario.seed);
    let mut world = world::World::new(scenario, seed, options.retain);
    let tie_break = match scenario.tie_break {
        TieBreak::Insertion => sim::TieBreak::Insertion,
        TieBreak::Shuffled => sim::TieBreak::Shuffled {
            seed: sim::RandomStreams::new(seed).stream("tie-break").next_u64(),
        },
    };
    let mut simulation: Simulation<world::Event> = Simulation::new(tie_break);
    simulation.schedule(Instant::ZERO, world::Event::Start);
    let budget = Budget {
        max_events: scenario.budget.max_events,
        max_time: Instant::ZERO.saturating_add(scenario.budget.max_time),
        max_pending: usize::try_from(scenario.budget.max_pending).unwrap_or(usize::MAX),
    };
    let outcome = simulation.run(&mut world, budget);
    let status = world.job_status();
    let mut diagnosis = Vec::new();
    if !matches!(outcome.reason, StopReason::Done) {
        diagnosis.push(format!(
            "the run stopped at {} after {} events: {}; the job is {status}",
            outcome.now, outcome.events, outcome.reason
        ));
        diagnosis.extend(world.describe_unfinished());
    }
    for fault in world.faults.unfired() {
        diagnosis.push(format!("fault {fault} never fired"));
    }
    let healed = world.faults.healed_at().is_some_and(|h| h <= outcome.now);
    let stalled = matches!(outcome.reason, StopReason::Quiescent) && !status.is_terminal();
    let not_terminated = !status.is_terminal()
        && (stalled
            || (healed
                && matches!(
                    outcome.reason,
                    StopReason::EventBudget | StopReason::TimeBudget
                )));
    let trace_len = world.trace.len();
    let finished_at = (status == crate::status::JobStatus::Finished).then_some(outcome.now);
    let current = world.who_is_current();
    let world::World {
        graph,
        reconciliations,
        rpcs_kept,
        rpcs_resent,
        trace,
        oracles,
        committed,
        recoveries,
        failovers,
        jm,
        probes,
        speculations,
        ..
    } = world;
    let sinks: Vec<(String, u64)> = graph
        .vertices
        .iter()
        .enumerate()
        .filter(|(_, v)| v.outputs.is_empty())
        .map(|(i, v)| {
            let records = committed
                .iter()
                .filter(|(s, _)| graph.subtasks[s.index()].vertex.index() == i)
                .map(|(_, f)| data::total_records(f))
                .sum();
            (v.name.clone(), records)
        })
        .collect();
    let mut violations = oracles.finish(
        &graph,
        status,
        &committed,
        (outcome.now, trace_len.saturating_sub(1)),
        &current,
    );
    if not_terminated {
        violations.push(Violation {
            invariant: Invariant::JobTerminates,
            time: outcome.now,
            actors: vec!["JobMaster".to_owned()],
            event_index: trace_len.saturating_sub(1),
            message: if stalled {
                format!("no event is pending but the job is still {status}: it is stuck")
            } else {
                format!(
                    "faults stopped, yet the job is still {status} when its budget ran out ({})",
                    outcome.reason
                )
            },
        });
    }
    let parallelism = graph
        .vertices
        .iter()
        .enumerate()
        .map(|(v, vertex)| {
            (
                vertex.name.clone(),
                jm.as_ref().and_then(|jm| jm.parallelism[v]),
            )
        })
        .collect();
    let speculative = speculations
        .iter()
        .map(|&(s, won)| (graph.subtask_name(s).to_string(), won))
        .collect();
    let figures = BatchFigures {
        parallelism,
        recoveries,
        failovers,
        finished_at,
        speculative,
    };
    RunReport {
        seed,
        status,
        stop: outcome.reason,
        events: outcome.events,
        sim_time: outcome.now,
        trace_hash: trace.hash(),
        sinks,
        violations,
        diagnosis,
        checkpoints: Vec::new(),
        failovers: Vec::new(),
        reconciliations,
        rpcs_kept,
        rpcs_resent,
        restore_refused: None,
        saved_checkpoint: None,
        committed_records: 0,
        probes,
        trace,
        graph,
        batch: Some(figures),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Retain;

    /// `job-terminates` for batch runs: a job given too little simulated time is cut by the
    /// budget with a diagnosis and judged (no fault, so the run is healed from the start); one
    /// cut while a fault is still to come is not judged; one that cannot go on is stuck; with
    /// enough time the same job finishes clean.
    #[test]
    fn a_budget_ends_a_batch_run_with_a_diagnosis_and_a_verdict() {
        let scenario = |budget: &str, rest: &str| {
            let text = format!(
                r#"{{"name": "t", "mode": "batch", {rest}
                "job": {{"vertices": [
                    {{"id": "src", "operator": "source", "parallelism": 2, "records": 40}},
                    {{"id": "sink", "operator": "sink", "parallelism": 1}}],
                  "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]}},
                "budget": {{{budget}}}}}"#
            );
            crate::scenario::parse(&text, "t").expect("valid")
        };
        let options = RunOptions {
            seed: None,
            retain: Retain::Nothing,
        };
        let short = run(&scenario(r#""max_time": "1us""#, ""), &options);
        assert_eq!(short.stop, StopReason::TimeBudget);
        let verdicts: Vec<&str> = short
            .violations
            .iter()
            .map(|v| v.message.as_str())
            .collect();
        assert_eq!(
            verdicts,
            ["faults stopped, yet the job is still RUNNING when its budget ran out (the next event is beyond the time budget)"]
        );
        assert!(
            short.diagnosis[0].starts_with("the run stopped at"),
            "{:?}",
            short.diagnosis
        );
        // A fault still to come: the budget cut a run that was not healed, so no verdict.
        let fault = r#""faults": [{"at": "10s", "fault": "crash_jobmaster"}],"#;
        let unhealed = run(&scenario(r#""max_events": 5"#, fault), &options);
        assert_eq!(unhealed.stop, StopReason::EventBudget);
        assert!(unhealed.violations.is_empty(), "{:?}", unhealed.violations);
        // A job that cannot go on (a FAILED report adopted by the bug): stuck, not cut.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/batch-reconcile-task-failed-during-outage.json"
        );
        let mut failed = crate::scenario::load(std::path::Path::new(path)).expect("shipped");
        failed.bug = Some(crate::bug::Bug::ReconcileAdoptsFailed);
        let stuck = run(&failed, &options);
        let stuck_verdicts: Vec<&str> = stuck
            .violations
            .iter()
            .filter(|v| v.invariant == Invariant::JobTerminates)
            .map(|v| v.message.as_str())
            .collect();
        assert_eq!(
            stuck_verdicts,
            ["no event is pending but the job is still RUNNING: it is stuck"]
        );
        let long = run(&scenario(r#""max_time": "60s""#, ""), &options);
        assert_eq!(long.status, crate::status::JobStatus::Finished);
        assert!(long.violations.is_empty() && long.diagnosis.is_empty());
        let figures = long.batch.as_ref().expect("batch figures");
        assert_eq!(figures.finished_at, Some(long.sim_time));
    }
}
