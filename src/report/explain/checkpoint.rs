//! Sentences about the checkpoint coordinator and the tasks' snapshots: triggers, plans,
//! barriers seen and inserted, snapshots, completion and abort (P1.1–P1.7, F1).

use super::*;

impl Narrator<'_> {
    pub(super) fn triggered(&self, checkpoint: u64) -> Told {
        let Some(record) = self
            .report
            .checkpoints
            .get((checkpoint as usize).wrapping_sub(1))
            .filter(|r| r.id == checkpoint)
        else {
            return key(
                CC,
                "P1.1",
                format!("triggers checkpoint {checkpoint}"),
                "plan computed",
            );
        };
        let plan = &record.plan;
        let fully: Vec<&str> = plan
            .fully_finished
            .iter()
            .map(|v| self.graph.vertices[v.index()].name.as_str())
            .collect();
        let mut text = format!(
            "plans checkpoint {checkpoint} from its own view of task status: trigger by RPC [{}]; wait for {} subtasks; finished [{}]",
            self.names(&plan.to_trigger),
            plan.to_wait_for.len(),
            self.names(&plan.finished),
        );
        if !fully.is_empty() {
            text.push_str(&format!("; fully finished vertices [{}]", fully.join(", ")));
        }
        if plan.finished.is_empty() {
            text.push_str(". Nothing finished yet: only the sources are triggered; the rest learn of it from barriers");
        } else {
            text.push_str(". A finished subtask contributes a finished marker, not state; a running subtask none of whose producers runs is triggered by RPC");
        }
        key(CC, "P1.1", text, "plan computed")
    }

    pub(super) fn not_triggered(&self, reason: TriggerFailure) -> Told {
        let (rule, why) = match reason {
            TriggerFailure::NotAllRequiredTasksRunning if self.legacy() => (
                "P1.2 legacy",
                "some subtask finished, and before FLIP-147 that stops all checkpoints (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            TriggerFailure::NotAllRequiredTasksRunning => (
                "F1.1",
                "some subtask of the plan is not RUNNING in the coordinator's view (NOT_ALL_REQUIRED_TASKS_RUNNING)",
            ),
            TriggerFailure::TooManyConcurrent => ("P1.1", "max_concurrent checkpoints are already pending"),
            TriggerFailure::MinPause => ("P1.1", "min_pause has not passed since the last completion"),
            TriggerFailure::NothingRunning => ("P1.1", "nothing is left running"),
        };
        told(CC, rule, format!("does not trigger a checkpoint: {why}"))
    }

    pub(super) fn seen(&mut self, subtask: SubtaskId, checkpoint: u64, by_trigger: bool) -> Told {
        let name = self.name(subtask);
        let task = &mut self.tasks[subtask.index()];
        task.eop_just_arrived = None;
        if by_trigger {
            task.seen = Some((checkpoint, None));
            let (rule, text) = if self.graph.subtasks[subtask.index()].inputs.is_empty() {
                ("P1.1", format!("learned of checkpoint {checkpoint} by the trigger RPC{WHY}: as a source it snapshots at once and sends barrier {checkpoint} downstream"))
            } else if self.flink() {
                ("F1.4", format!("learned of checkpoint {checkpoint} by the trigger RPC: a non-source snapshots at once if every input delivered EndOfPartition, otherwise it injects barriers into the open channels"))
            } else {
                ("P1.3", format!("learned of checkpoint {checkpoint} by the trigger RPC (all its producers finished): barriers go before every buffered EndOfPartition; if none is left (step 5) it snapshots at once"))
            };
            return told(name, rule, text);
        }
        let via = task.last_barrier_channel;
        task.seen = Some((checkpoint, via));
        task.aligning = (!self.unaligned).then_some(checkpoint);
        let from = via.map_or(String::new(), |c| format!(" on {}", self.channel(c)));
        let text = if self.unaligned {
            format!("learned of checkpoint {checkpoint} from its first barrier{from}: unaligned, it snapshots at once and spills what its other channels hold before their barriers")
        } else {
            format!("learned of checkpoint {checkpoint} from its first barrier{from}: alignment starts{WHY}; it waits for barrier {checkpoint} or EndOfPartition on every other channel")
        };
        told(name, "P1.3, P1.4", text)
    }

    pub(super) fn inserted(
        &mut self,
        subtask: SubtaskId,
        channel: ChannelId,
        checkpoint: u64,
    ) -> Told {
        let name = self.name(subtask);
        let ch = self.channel(channel);
        let task = &self.tasks[subtask.index()];
        if task.eop_just_arrived == Some(channel) {
            return told(
                name,
                "P1.3 step 3",
                format!("EndOfPartition was just enqueued on {ch} while checkpoint {checkpoint} is pending, so barrier {checkpoint} is inserted right before it"),
            );
        }
        let how = match task.seen {
            Some((n, None)) if n == checkpoint => " by the trigger RPC".to_owned(),
            Some((n, Some(c))) if n == checkpoint => {
                format!(" by the barrier on {}", self.channel(c))
            }
            _ => String::new(),
        };
        told(
            name.clone(),
            "P1.3 step 2",
            format!("{name} learned of checkpoint {checkpoint}{how} while {ch} held EndOfPartition, so barrier {checkpoint} goes right before it: the records still queued ahead of EndOfPartition stay inside the cut"),
        )
    }

    pub(super) fn snapshot(&mut self, subtask: SubtaskId, checkpoint: u64, finished: bool) -> Told {
        self.tasks[subtask.index()].aligning = None;
        let name = self.name(subtask);
        if !finished {
            let what = if self.unaligned {
                "its operator state (unaligned: in-flight buffers follow as channel state)"
            } else {
                "its operator state"
            };
            return told(
                name,
                "P1.4",
                format!("snapshots {what} for checkpoint {checkpoint} to durable storage and acknowledges it"),
            );
        }
        let (rule, why) = match self.protocol {
            Some(FinishProtocol::Flink) => (
                "F1.5 step 2",
                "the first checkpoint after its end of input: its final checkpoint, flagged 'task finished'",
            ),
            _ if self.is_two_phase_sink(subtask) => (
                "P1.7",
                "taken after its end of input: it covers the sink's final state, so its completion lets the last transaction commit",
            ),
            _ => ("P1.2", "taken after its end of input: its final state"),
        };
        key(
            name,
            rule,
            format!("snapshot for checkpoint {checkpoint}, {why}"),
            "final checkpoint",
        )
    }

    pub(super) fn completed(&self, checkpoint: u64) -> Told {
        let record = self
            .report
            .checkpoints
            .get((checkpoint as usize).wrapping_sub(1))
            .filter(|r| r.id == checkpoint);
        let detail = match record {
            Some(r) => {
                let took = match r.outcome {
                    Outcome::Completed(at) => format!(
                        " {} after it was triggered",
                        at.saturating_duration_since(r.triggered_at)
                    ),
                    Outcome::Pending | Outcome::Aborted(..) => String::new(),
                };
                let finished = if r.plan.finished.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", plus finished markers for [{}]",
                        self.names(&r.plan.finished)
                    )
                };
                format!(
                    ":{took}, every one of the {} awaited subtasks acknowledged{finished}",
                    r.plan.to_wait_for.len()
                )
            }
            None => String::new(),
        };
        key(
            CC,
            "P1.1",
            format!("checkpoint {checkpoint} COMPLETED{detail}; the tasks are notified"),
            "checkpoint completed",
        )
    }

    pub(super) fn aborted(&self, checkpoint: u64, reason: AbortReason) -> Told {
        let (rule, why): (&str, String) = match reason {
            AbortReason::TriggerMissed => (
                if self.legacy() { "P1.2 legacy" } else { "F1.2" },
                "a trigger reached a task that had already finished; without re-triggering, the whole checkpoint is aborted and the next one plans again".to_owned(),
            ),
            AbortReason::Declined(d) => {
                let (rule, why) = decline_rule(d);
                (rule, format!("a task declined: {why}"))
            }
            AbortReason::Expired => (
                "P4 checkpoint-progress",
                "it did not complete within its timeout".to_owned(),
            ),
            AbortReason::Failover => (
                "P1.8",
                "a failover reset tasks it was waiting for".to_owned(),
            ),
            AbortReason::Subsumed => ("F1.3", "a newer checkpoint completed first".to_owned()),
            AbortReason::JobEnded => ("P1.1", "the job ended with it still pending".to_owned()),
            AbortReason::TriggerFailed => (
                "F1.9",
                "a trigger reached a TaskManager that no longer hosts that attempt of the task (TASK_CHECKPOINT_FAILURE); not counted against tolerable_failures".to_owned(),
            ),
        };
        key(
            CC,
            rule,
            format!("checkpoint {checkpoint} ABORTED ({}): {why}", reason.id()),
            "checkpoint aborted",
        )
    }
}
