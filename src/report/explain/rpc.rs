//! Sentences about RPCs: what each call asks and why it was sent (P1, P3).

use super::*;

impl Narrator<'_> {
    pub(super) fn rpc(
        &mut self,
        from: crate::trace::Address,
        to: crate::trace::Address,
        subtask: SubtaskId,
        attempt: u32,
        call: Call,
    ) -> Told {
        let name = self.name(subtask);
        let dest = address(to);
        match call {
            Call::SubmitTask(restore) => {
                let (rule, how) = match (restore.checkpoint, restore.finished) {
                    (0, false) => ("", "a fresh start".to_owned()),
                    (0, true) => ("F1.6", "finished on restore".to_owned()),
                    (c, false) => ("P1.8", format!("restoring its state from checkpoint {c}")),
                    (c, true) => (
                        "F1.6",
                        format!("finished on restore: checkpoint {c} recorded it finished, so it runs no operator and processes no record"),
                    ),
                };
                told(dest, rule, format!("deploys {name} attempt {attempt}: {how}"))
            }
            Call::UpdateTaskExecutionState { state, .. } => told(
                dest,
                "",
                format!("receives {name} attempt {attempt} is {state} from {}", address(from)),
            ),
            Call::TriggerCheckpoint(n) => {
                let why = if self.is_source(subtask) {
                    "a source is always triggered by RPC".to_owned()
                } else {
                    "none of its producers was running in the coordinator's view".to_owned()
                };
                told(
                    dest,
                    if self.flink() && !self.is_source(subtask) { "P1.1, F1.4" } else { "P1.1" },
                    format!("delivers the trigger for checkpoint {n} to {name}{WHY} ({why})"),
                )
            }
            Call::NotifyCheckpointComplete(n) => {
                let commit = if self.is_two_phase_sink(subtask) {
                    "\u{1f}: a two-phase-commit sink commits the transaction it pre-committed"
                } else {
                    ""
                };
                told(
                    dest,
                    if commit.is_empty() { "" } else { "P1.7" },
                    format!("tells {name} that checkpoint {n} completed{commit}"),
                )
            }
            Call::NotifyCheckpointAborted(n) => told(
                dest,
                "",
                format!("tells {name} that checkpoint {n} was aborted{WHY}: it drops what it prepared for it"),
            ),
            Call::AcknowledgeCheckpoint {
                checkpoint,
                finished,
            } => {
                let acks = {
                    let acks = self.acks.entry(checkpoint).or_default();
                    *acks += 1;
                    *acks
                };
                let awaited = self
                    .report
                    .checkpoints
                    .get((checkpoint as usize).wrapping_sub(1))
                    .map_or(0, |c| c.plan.to_wait_for.len());
                let final_note = if finished {
                    if self.flink() {
                        " It is flagged 'task finished' (F1.5 step 2)."
                    } else {
                        " Taken after its end of input."
                    }
                } else {
                    ""
                };
                told(
                    CC,
                    "P1.1",
                    format!(
                        "{name} acknowledged checkpoint {checkpoint}: {acks} of {awaited} awaited subtasks so far.{final_note}"
                    ),
                )
            }
            Call::DeclineCheckpoint { checkpoint, reason } => {
                let (rule, why) = decline_rule(reason);
                told(CC, rule, format!("{name} declines checkpoint {checkpoint}: {why}"))
            }
            Call::TriggerSavepoint { checkpoint, drain } => told(
                dest,
                "F1.11 step 2",
                format!("delivers the trigger of savepoint {checkpoint} to {name}: it stops ({}), then snapshots", if drain { "drain" } else { "no drain" }),
            ),
            Call::TriggerFailed(n) => told(
                CC,
                "F1.9",
                format!("the TaskManager answers the trigger of checkpoint {n} for {name}: it no longer hosts that attempt (unknown task), so the checkpoint fails, without counting against tolerable_failures"),
            ),
            Call::TriggerMissed(n) => {
                let (rule, next) = match self.protocol {
                    Some(FinishProtocol::Option1) => (
                        "P1.2 option1",
                        "the coordinator records its empty state and re-triggers each descendant whose inputs have all finished",
                    ),
                    Some(FinishProtocol::Flink) => ("F1.2", "Flink aborts the whole checkpoint; the next one plans again"),
                    Some(FinishProtocol::Legacy) => ("P1.2 legacy", "the checkpoint fails"),
                    Some(FinishProtocol::Option2) | None => ("P1.2", "it is ignored"),
                };
                told(
                    CC,
                    rule,
                    format!("the trigger for checkpoint {n} reached {name} after it had finished (the coordinator's view lagged): {next}"),
                )
            }
            Call::Finishing => told(
                CC,
                "P1.2 option2",
                format!("{name} reports 'finishing' before emitting EndOfPartition; the coordinator marks it finished at once, so no later trigger can miss it"),
            ),
            Call::FinishingAnswer(set) => {
                let ids: Vec<String> = set.iter().map(|n| n.to_string()).collect();
                let text = if ids.is_empty() {
                    format!("answers {name}: no pending checkpoint it has not taken part in, so it emits EndOfPartition")
                } else {
                    format!(
                        "answers {name} with the pending checkpoints [{}]: it performs each (an empty snapshot, its input ended) and broadcasts their barriers before EndOfPartition",
                        ids.join(", ")
                    )
                };
                told(dest, "P1.2 option2", text)
            }
            Call::CancelTask => told(dest, "P1.8", format!("cancels {name} attempt {attempt} for the failover")),
            Call::ReportExecution { state, .. } => told(
                dest,
                "P3.2",
                format!("learns from {} that it hosts {name} attempt {attempt}, {state}", address(from)),
            ),
            Call::ReportDone => told(dest, "P3.2", format!("has the whole report of {}", address(from))),
            Call::RequestSplit => told(dest, "F1.13 step 1", format!("hears that {name} attempt {attempt} holds no split and asks for one")),
            Call::AssignSplit(Some(split)) => told(dest, "F1.13 step 1", format!("delivers split {split} from the enumerator to {name} attempt {attempt}, which reads it next")),
            Call::AssignSplit(None) => told(dest, "F1.13 step 1", format!("delivers the enumerator's answer to {name} attempt {attempt}: no split is left, so it ends its input after its splits")),
            // Batch calls: the batch world records no `rpc` events, so no trace holds them.
            Call::RegisterTaskManager
            | Call::ReleasePartition
            | Call::AskPartitions
            | Call::ReportPartition { .. }
            | Call::ReportSplit(_)
            | Call::ReportInput { .. } => unreachable!("a batch RPC is never recorded"),
        }
    }
}
