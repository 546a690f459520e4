//! Sentences about the job's and the executions' states (P1.8 transition tables, P2).

use super::*;

impl Narrator<'_> {
    pub(super) fn job_status(&self, from: JobStatus, to: JobStatus) -> Told {
        let text = format!("job {from} → {to}");
        match to {
            JobStatus::Finished => key(
                JM,
                "P0",
                format!("{text}: every subtask reached FINISHED"),
                "job finished",
            ),
            JobStatus::Failed => key(
                JM,
                "P1.8",
                format!("{text}: the job cannot recover"),
                "job failed",
            ),
            JobStatus::Restarting => told(
                JM,
                "P1.8",
                format!("{text}: the failed tasks are cancelled before restarting"),
            ),
            JobStatus::Failing => told(JM, "P1.8", format!("{text}: a task failed")),
            _ => told(JM, "", text),
        }
    }

    pub(super) fn execution_state(
        &mut self,
        time: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) -> Told {
        let lag = match self.reported_at.take() {
            Some(sent) => format!(
                " (reported by its TaskManager at {sent}, {} ago)",
                time.saturating_duration_since(sent)
            ),
            None => String::new(),
        };
        let base = format!(
            "now sees {} attempt {attempt} {to}{lag}",
            self.name(subtask)
        );
        if self.report.batch.is_some() {
            // A batch job: a failure fails over (P2.4 step 4's expansion); a cancel ends a
            // reset attempt, or the loser of a speculated pair (P2.8).
            let rule = match to {
                ExecutionState::Canceled if self.speculated.remove(&subtask) => "P2.8",
                ExecutionState::Failed | ExecutionState::Canceled => "P2.4",
                _ => "",
            };
            return told(JM, rule, base);
        }
        if self.protocol.is_none() {
            // Without checkpointing no plan is involved.
            let rule = match to {
                ExecutionState::Failed | ExecutionState::Canceled => "P1.8",
                _ => "",
            };
            return told(JM, rule, base);
        }
        match to {
            ExecutionState::Finished => told(
                JM,
                "P1.1",
                format!("{base}{WHY}: from the next plan on the coordinator counts it finished; until now its view lagged the task"),
            ),
            ExecutionState::Running => told(
                JM,
                "F1.1",
                format!("{base}{WHY}: it can be part of a checkpoint plan (every subtask in a plan must be RUNNING)"),
            ),
            ExecutionState::Failed | ExecutionState::Canceled => told(JM, "P1.8", base),
            _ => told(JM, "", base),
        }
    }

    pub(super) fn task_state(
        &mut self,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) -> Told {
        // A new attempt, or a terminal one, aligns nothing.
        let task = &mut self.tasks[subtask.index()];
        task.aligning = None;
        if to == ExecutionState::Deploying {
            task.barrier_taken.clear();
            task.eop_enqueued.clear();
            task.eop_processed.clear();
        }
        let name = self.name(subtask);
        let base = format!("attempt {attempt} is {to}");
        if to != ExecutionState::Finished {
            let rule = match to {
                ExecutionState::Failed | ExecutionState::Canceled => "P1.8",
                _ => "",
            };
            return told(name, rule, base);
        }
        let (rule, why) = match self.protocol {
            Some(FinishProtocol::Flink) => (
                "F1.5 step 4",
                "its final checkpoint completed and its consumers processed all records, so it closed and enqueued EndOfPartition",
            ),
            Some(FinishProtocol::Option2) => (
                "P1.2 option2",
                "it reported 'finishing', performed the pending checkpoints it was told of, and emitted EndOfPartition",
            ),
            Some(FinishProtocol::Option1) => (
                "P1.6, P1.2 option1",
                "no checkpoint it took part in is pending any more. The JobMaster learns of it only by RPC, so a trigger may still race it",
            ),
            Some(FinishProtocol::Legacy) => (
                "P1.2 legacy",
                "from now on the coordinator triggers no checkpoint (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            None => ("P0", "its result partition ended"),
        };
        told(name, rule, format!("{base}: {why}"))
    }
}
