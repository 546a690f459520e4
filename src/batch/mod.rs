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

pub use crate::jobmaster::batch::RecoveryRecord;
use sim::{Duration, Instant};

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

#[cfg(test)]
mod tests {
    use crate::oracle::invariant::Invariant;
    use crate::run::{run, RunOptions};
    use crate::trace::Retain;
    use sim::StopReason;

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
            eager_sources: false,
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
