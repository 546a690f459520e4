//! `checkpoint-failures` (F1.9): how checkpoints fail, from the oracle's own ledger.
//!
//! - **A snapshot only while RUNNING.** Flink's `Task` acts on a trigger only in state RUNNING
//!   and declines it before (TASK_NOT_READY): a task that snapshots while still deploying or
//!   initializing would write state it has not restored yet.
//! - **A failed snapshot is never acknowledged.** When a `fail_snapshot` fault breaks the
//!   synchronous part, the task fails at that instant; when it breaks the asynchronous part,
//!   the task declines and no acknowledgement of that snapshot may reach the coordinator.
//! - **The tolerable-failure count**, as Flink's `CheckpointFailureManager` keeps it: a failure
//!   counts when its reason is one Flink counts (here: expired, or a failed asynchronous
//!   part) and its checkpoint is newer than the last completed one; a completion of a newer
//!   checkpoint resets the count; one more failure than `tolerable_failures` fails the job over
//!   as a whole, at that instant, and clears the count. A new JobMaster counts from zero. The
//!   oracle keeps the count itself and checks that the coordinator declares the threshold
//!   crossed exactly then, and that a global failover follows (a decline's failure only while
//!   the declining attempt still runs, Flink's `failJobDueToTaskFailure`).

use super::invariant::Invariant;
use super::Violation;
use crate::graph::ExecutionGraph;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{AbortReason, Address, Call, DeclineReason, FaultEvent, Rpc, TraceEvent};
use sim::Instant;

/// The threshold was crossed by checkpoint `checkpoint`; what must follow this instant.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    checkpoint: u64,
    failures: u32,
    at: Instant,
    index: u64,
    /// The coordinator declared it (`checkpoint_failures_exceeded`).
    declared: bool,
    /// A global failover must follow (the job is RUNNING, and a decline's attempt still runs).
    failover_due: bool,
}

pub struct CheckpointFailures {
    limit: Option<u32>,
    failures: u32,
    last_succeeded: u64,
    crossing: Option<Crossing>,
    /// The JobMaster's view: per subtask, its current attempt and state.
    view: Vec<(u32, ExecutionState)>,
    status: JobStatus,
    /// Per subtask, the task's own state of its latest attempt, once it recorded one.
    task: Vec<Option<(u32, ExecutionState)>>,
    /// The decline the JobMaster received last, if it is what the next abort is about.
    last_decline: Option<(u64, u32, u32)>,
    /// Snapshots whose asynchronous part failed: (subtask, attempt, checkpoint).
    failed_uploads: Vec<(u32, u32, u64)>,
    /// A synchronous part failed: this attempt must record FAILED this instant.
    must_fail: Option<(u32, u32, u64, Instant, u64)>,
    /// Global failures the count called for while the job was RUNNING.
    global_failures: u64,
    /// F1.11: synchronous savepoints, whose failures Flink does not count.
    savepoints: Vec<u64>,
}

/// F1.9: the failures Flink's `CheckpointFailureManager` counts: `CHECKPOINT_EXPIRED` and
/// `CHECKPOINT_ASYNC_EXCEPTION` (of the reasons a run here can show). The oracle's own table.
fn counted(reason: AbortReason) -> bool {
    matches!(
        reason,
        AbortReason::Expired | AbortReason::Declined(DeclineReason::AsyncException)
    )
}

impl CheckpointFailures {
    pub fn new(graph: &ExecutionGraph, limit: Option<u32>) -> CheckpointFailures {
        let n = graph.subtasks.len();
        CheckpointFailures {
            limit,
            failures: 0,
            last_succeeded: 0,
            crossing: None,
            view: vec![(0, ExecutionState::Created); n],
            status: JobStatus::Initializing,
            task: vec![None; n],
            last_decline: None,
            savepoints: Vec::new(),
            failed_uploads: Vec::new(),
            must_fail: None,
            global_failures: 0,
        }
    }

    /// Global failures the count called for: `job-status` adds them to the failovers the
    /// faults can cause.
    pub fn global_failures(&self) -> u64 {
        self.global_failures
    }

    fn violation(actor: &str, index: u64, now: Instant, message: String) -> Violation {
        Violation {
            invariant: Invariant::CheckpointFailures,
            time: now,
            actors: vec![actor.to_owned()],
            event_index: index,
            message: format!("{message} (F1.9)"),
        }
    }

    /// Time moves on (or the run ends): what this instant owed must have happened.
    fn settle(&mut self, graph: &ExecutionGraph, now: Instant) -> Option<Violation> {
        if let Some((s, attempt, n, at, index)) = self.must_fail {
            if now > at {
                self.must_fail = None;
                let name = graph.subtask_name(crate::graph::SubtaskId(s)).to_string();
                return Some(Self::violation(
                    &name,
                    index,
                    at,
                    format!(
                        "the synchronous part of {name} attempt {attempt}'s snapshot for \
                         checkpoint {n} failed, but the task did not fail: an exception in \
                         snapshotState fails the task"
                    ),
                ));
            }
        }
        let c = self.crossing?;
        if now <= c.at {
            return None;
        }
        self.crossing = None;
        if !c.declared {
            return Some(Self::violation(
                "CheckpointCoordinator",
                c.index,
                c.at,
                format!(
                    "checkpoint {} made {} counted checkpoint failures in a row, more than \
                     tolerable_failures ({}), but the coordinator did not fail the job",
                    c.checkpoint,
                    c.failures,
                    self.limit.unwrap_or(0)
                ),
            ));
        }
        c.failover_due.then(|| {
            Self::violation(
                "JobMaster",
                c.index,
                c.at,
                format!(
                    "the checkpoint failures in a row exceeded tolerable_failures at checkpoint \
                     {}, but no global failover followed",
                    c.checkpoint
                ),
            )
        })
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        if let Some(v) = self.settle(graph, now) {
            return Some(v);
        }
        match *event {
            TraceEvent::JobStatus { to, .. } => {
                self.status = to;
                if let Some(c) = &mut self.crossing {
                    // Restarts exhausted: the job fails instead of restarting.
                    if matches!(to, JobStatus::Failing | JobStatus::Restarting) {
                        c.failover_due = false;
                    }
                }
            }
            TraceEvent::JobMasterElected { .. } => {
                // A new coordinator counts from zero.
                self.failures = 0;
                self.last_succeeded = 0;
                self.crossing = None;
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                to,
                ..
            } => self.view[subtask.index()] = (attempt, to),
            TraceEvent::TaskState {
                subtask,
                attempt,
                to,
                ..
            } => {
                self.task[subtask.index()] = Some((attempt, to));
                if to == ExecutionState::Failed
                    && self
                        .must_fail
                        .is_some_and(|(s, a, ..)| s == subtask.0 && a == attempt)
                {
                    self.must_fail = None;
                }
            }
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                ..
            } => {
                let (current, state) = self.task[subtask.index()]?;
                if current == attempt && state != ExecutionState::Running {
                    let name = graph.subtask_name(subtask).to_string();
                    return Some(Self::violation(
                        &name,
                        index,
                        now,
                        format!(
                            "{name} attempt {attempt} took a snapshot for checkpoint \
                             {checkpoint} while {state}: a task takes part in checkpoints only \
                             while RUNNING, and declines a trigger before (TASK_NOT_READY)"
                        ),
                    ));
                }
            }
            TraceEvent::FaultFired {
                fault:
                    FaultEvent::FailSnapshot {
                        subtask,
                        checkpoint,
                        sync,
                    },
                ..
            } => {
                let attempt = self.task[subtask.index()].map_or(0, |(a, _)| a);
                if sync {
                    self.must_fail = Some((subtask.0, attempt, checkpoint, now, index));
                } else {
                    self.failed_uploads.push((subtask.0, attempt, checkpoint));
                }
            }
            TraceEvent::Rpc {
                to: Address::JobMaster,
                rpc:
                    Rpc {
                        subtask,
                        attempt,
                        call,
                    },
                ..
            } => match call {
                Call::AcknowledgeCheckpoint { checkpoint, .. }
                    if self
                        .failed_uploads
                        .contains(&(subtask.0, attempt, checkpoint)) =>
                {
                    let name = graph.subtask_name(subtask).to_string();
                    return Some(Self::violation(
                        &name,
                        index,
                        now,
                        format!(
                            "{name} attempt {attempt} acknowledged checkpoint {checkpoint}, \
                             whose asynchronous part failed: its state was never written, so it \
                             must decline (CHECKPOINT_ASYNC_EXCEPTION)"
                        ),
                    ));
                }
                Call::DeclineCheckpoint { checkpoint, .. } => {
                    self.last_decline = Some((checkpoint, subtask.0, attempt));
                }
                _ => {}
            },
            TraceEvent::CheckpointCompleted { checkpoint } if checkpoint > self.last_succeeded => {
                self.last_succeeded = checkpoint;
                self.failures = 0;
            }
            TraceEvent::SavepointTriggered { checkpoint, .. } => self.savepoints.push(checkpoint),
            TraceEvent::CheckpointAborted { checkpoint, reason } => {
                let decline = self.last_decline.take().filter(|d| d.0 == checkpoint);
                let limit = self.limit?;
                if !counted(reason)
                    || checkpoint <= self.last_succeeded
                    || self.savepoints.contains(&checkpoint)
                {
                    return None;
                }
                self.failures += 1;
                if self.failures > limit {
                    // Flink's `failJobDueToTaskFailure` fails the job only while the
                    // declining attempt still runs; an expired checkpoint always does.
                    let still_running = decline.is_none_or(|(_, s, a)| {
                        let (current, state) = self.view[s as usize];
                        current == a
                            && matches!(
                                state,
                                ExecutionState::Running | ExecutionState::Initializing
                            )
                    });
                    self.crossing = Some(Crossing {
                        checkpoint,
                        failures: self.failures,
                        at: now,
                        index,
                        declared: false,
                        failover_due: still_running && self.status == JobStatus::Running,
                    });
                    self.failures = 0;
                }
            }
            TraceEvent::CheckpointFailuresExceeded {
                checkpoint,
                failures,
            } => match &mut self.crossing {
                Some(c) if c.checkpoint == checkpoint && c.failures == failures => {
                    c.declared = true;
                    // A global failure the JobMaster must act on: a failover, or, with the
                    // restart strategy used up, the job's failure.
                    if c.failover_due {
                        self.global_failures += 1;
                    }
                }
                _ => {
                    return Some(Self::violation(
                        "CheckpointCoordinator",
                        index,
                        now,
                        format!(
                            "the coordinator declared {failures} checkpoint failures in a row at \
                             checkpoint {checkpoint}, but by the failures Flink counts (expired, \
                             or a failed asynchronous part, since the last completed checkpoint) \
                             the job had {} of the {} tolerable_failures allows",
                            self.failures,
                            self.limit.map_or("unlimited".to_owned(), |l| l.to_string())
                        ),
                    ));
                }
            },
            TraceEvent::Failover { cause: None, .. } => match &mut self.crossing {
                Some(c) if c.declared => c.failover_due = false,
                _ => {
                    return Some(Self::violation(
                        "JobMaster",
                        index,
                        now,
                        "the JobMaster failed the whole job over for checkpoint failures, but \
                         their count had not exceeded tolerable_failures"
                            .to_owned(),
                    ));
                }
            },
            _ => {}
        }
        None
    }

    /// The run ended: what its last instant owed.
    pub fn finish(&mut self, graph: &ExecutionGraph) -> Option<Violation> {
        self.settle(graph, Instant::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Instant {
        Instant::ZERO + sim::Duration::from_nanos(ms * MS)
    }

    /// Feeds `events` at `ms` each, in order; returns the ids of what was violated.
    fn feed(o: &mut CheckpointFailures, events: &[(u64, TraceEvent)]) -> Vec<String> {
        let g = crate::oracle::tests::source_to_sink();
        let mut found = Vec::new();
        for (i, (ms, e)) in events.iter().enumerate() {
            found.extend(o.observe(&g, i as u64, at(*ms), e).map(|v| v.message));
        }
        found.extend(o.finish(&g).map(|v| v.message));
        found
    }

    fn aborted(checkpoint: u64, reason: AbortReason) -> TraceEvent {
        TraceEvent::CheckpointAborted { checkpoint, reason }
    }

    fn exceeded(checkpoint: u64, failures: u32) -> TraceEvent {
        TraceEvent::CheckpointFailuresExceeded {
            checkpoint,
            failures,
        }
    }

    fn running() -> TraceEvent {
        TraceEvent::JobStatus {
            from: JobStatus::Created,
            to: JobStatus::Running,
        }
    }

    const GLOBAL: TraceEvent = TraceEvent::Failover {
        cause: None,
        restarting: 2,
        full: true,
    };

    #[test]
    fn only_counted_failures_newer_than_the_last_completion_add_up() {
        let g = crate::oracle::tests::source_to_sink();
        let mut o = CheckpointFailures::new(&g, Some(1));
        let closing = AbortReason::Declined(DeclineReason::TaskClosing);
        let events = [
            (1, running()),
            (2, TraceEvent::CheckpointCompleted { checkpoint: 3 }),
            // Older than the last completion, or not a reason Flink counts: nothing.
            (3, aborted(2, AbortReason::Expired)),
            (4, aborted(4, closing)),
            (5, aborted(5, AbortReason::TriggerFailed)),
            (6, aborted(6, AbortReason::Expired)),
            (
                7,
                aborted(7, AbortReason::Declined(DeclineReason::AsyncException)),
            ),
            (7, exceeded(7, 2)),
            (7, GLOBAL),
        ];
        assert_eq!(feed(&mut o, &events), Vec::<String>::new());
        assert_eq!(o.global_failures(), 1);
    }

    #[test]
    fn a_crossing_must_be_declared_and_followed_by_a_failover_that_instant() {
        let g = crate::oracle::tests::source_to_sink();
        let undeclared = [(1, running()), (2, aborted(1, AbortReason::Expired))];
        let found = feed(&mut CheckpointFailures::new(&g, Some(0)), &undeclared);
        assert!(found[0].contains("did not fail the job"), "{found:?}");
        let no_failover = [
            (1, running()),
            (2, aborted(1, AbortReason::Expired)),
            (2, exceeded(1, 1)),
            (3, TraceEvent::CheckpointTriggered { checkpoint: 2 }),
        ];
        let found = feed(&mut CheckpointFailures::new(&g, Some(0)), &no_failover);
        assert!(found[0].contains("no global failover"), "{found:?}");
        let early = [(1, running()), (2, exceeded(1, 1))];
        let found = feed(&mut CheckpointFailures::new(&g, Some(3)), &early);
        assert!(found[0].contains("had 0 of the 3"), "{found:?}");
        let unexplained = [(1, running()), (2, GLOBAL)];
        let found = feed(&mut CheckpointFailures::new(&g, None), &unexplained);
        assert!(found[0].contains("had not exceeded"), "{found:?}");
        // The failover comes after the coordinator's declaration, not before it.
        let failover_first = [
            (1, running()),
            (2, aborted(1, AbortReason::Expired)),
            (2, GLOBAL),
            (2, exceeded(1, 1)),
        ];
        let found = feed(&mut CheckpointFailures::new(&g, Some(0)), &failover_first);
        assert!(found[0].contains("had not exceeded"), "{found:?}");
        // The declaration names the checkpoint that crossed the threshold and the count.
        for wrong in [exceeded(1, 2), exceeded(2, 1)] {
            let events = [
                (1, running()),
                (2, aborted(1, AbortReason::Expired)),
                (2, wrong),
            ];
            let found = feed(&mut CheckpointFailures::new(&g, Some(0)), &events);
            assert!(found[0].contains("the coordinator declared"), "{found:?}");
        }
    }

    /// Only a completion newer than the last one resets the count (Flink's
    /// `handleCheckpointSuccess`): a late or repeated one does not.
    #[test]
    fn an_older_or_repeated_completion_resets_nothing() {
        let g = crate::oracle::tests::source_to_sink();
        let completed = |checkpoint| TraceEvent::CheckpointCompleted { checkpoint };
        for again in [5, 4] {
            let events = [
                (1, running()),
                (2, completed(5)),
                (3, aborted(6, AbortReason::Expired)),
                (4, completed(again)),
                (5, aborted(7, AbortReason::Expired)),
                (5, exceeded(7, 2)),
                (5, GLOBAL),
            ];
            let mut o = CheckpointFailures::new(&g, Some(1));
            assert_eq!(feed(&mut o, &events), Vec::<String>::new(), "{again}");
            assert_eq!(o.global_failures(), 1);
        }
    }

    /// F1.11: a savepoint's failure is not counted.
    #[test]
    fn a_savepoints_failure_is_not_counted() {
        let g = crate::oracle::tests::source_to_sink();
        let events = [
            (1, running()),
            (
                2,
                TraceEvent::SavepointTriggered {
                    checkpoint: 1,
                    drain: false,
                },
            ),
            (3, aborted(1, AbortReason::Expired)),
        ];
        assert_eq!(
            feed(&mut CheckpointFailures::new(&g, Some(0)), &events),
            Vec::<String>::new()
        );
    }

    /// A decline's threshold crossing fails the job over only while the JobMaster still sees
    /// the declining attempt running (Flink's `failJobDueToTaskFailure`).
    #[test]
    fn a_running_decliners_crossing_owes_a_failover() {
        let g = crate::oracle::tests::source_to_sink();
        let sink = SubtaskId(1);
        let view = |attempt, to| TraceEvent::ExecutionState {
            subtask: sink,
            attempt,
            from: ExecutionState::Deploying,
            to,
        };
        let decline = TraceEvent::Rpc {
            from: Address::TaskManager(0),
            to: Address::JobMaster,
            sent_at: at(1),
            rpc: Rpc {
                subtask: sink,
                attempt: 0,
                call: Call::DeclineCheckpoint {
                    checkpoint: 1,
                    reason: DeclineReason::AsyncException,
                },
            },
        };
        let events = |state: TraceEvent| {
            [
                (1, running()),
                (1, state),
                (2, decline),
                (
                    2,
                    aborted(1, AbortReason::Declined(DeclineReason::AsyncException)),
                ),
                (2, exceeded(1, 1)),
            ]
        };
        // Attempt 0 runs: a failover is owed, and it is one global failure.
        let mut o = CheckpointFailures::new(&g, Some(0));
        let found = feed(&mut o, &events(view(0, ExecutionState::Running)));
        assert!(found[0].contains("no global failover"), "{found:?}");
        assert_eq!(o.global_failures(), 1);
        // The JobMaster already runs attempt 1: attempt 0's decline fails nothing over.
        let mut o = CheckpointFailures::new(&g, Some(0));
        let found = feed(&mut o, &events(view(1, ExecutionState::Running)));
        assert_eq!(found, Vec::<String>::new());
        assert_eq!(o.global_failures(), 0);
    }

    #[test]
    fn a_new_jobmaster_counts_from_zero_and_a_gone_decliner_fails_nothing_over() {
        let g = crate::oracle::tests::source_to_sink();
        let sink = SubtaskId(1);
        let decline = |attempt| TraceEvent::Rpc {
            from: Address::TaskManager(0),
            to: Address::JobMaster,
            sent_at: at(1),
            rpc: Rpc {
                subtask: sink,
                attempt,
                call: Call::DeclineCheckpoint {
                    checkpoint: 3,
                    reason: DeclineReason::AsyncException,
                },
            },
        };
        let events = [
            (1, running()),
            (2, aborted(1, AbortReason::Expired)),
            (3, TraceEvent::JobMasterElected { incarnation: 1 }),
            (4, running()),
            (5, aborted(2, AbortReason::Expired)),
            // The JobMaster already sees attempt 0 of the sink FAILED: no failover is due.
            (
                6,
                TraceEvent::ExecutionState {
                    subtask: sink,
                    attempt: 0,
                    from: ExecutionState::Running,
                    to: ExecutionState::Failed,
                },
            ),
            (7, decline(0)),
            (
                7,
                aborted(3, AbortReason::Declined(DeclineReason::AsyncException)),
            ),
            (7, exceeded(3, 2)),
        ];
        assert_eq!(
            feed(&mut CheckpointFailures::new(&g, Some(1)), &events),
            Vec::<String>::new()
        );
    }

    #[test]
    fn snapshots_before_running_and_acknowledged_failures_are_violations() {
        let g = crate::oracle::tests::source_to_sink();
        let src = SubtaskId(0);
        let state = |to| TraceEvent::TaskState {
            subtask: src,
            attempt: 0,
            from: ExecutionState::Deploying,
            to,
        };
        let snapshot = TraceEvent::Snapshot {
            subtask: src,
            attempt: 0,
            checkpoint: 1,
            finished: false,
        };
        let early = [(1, state(ExecutionState::Initializing)), (2, snapshot)];
        let found = feed(&mut CheckpointFailures::new(&g, None), &early);
        assert!(found[0].contains("while INITIALIZING"), "{found:?}");
        let fired = |sync| TraceEvent::FaultFired {
            index: 0,
            fault: FaultEvent::FailSnapshot {
                subtask: src,
                checkpoint: 1,
                sync,
            },
        };
        let ack = TraceEvent::Rpc {
            from: Address::TaskManager(0),
            to: Address::JobMaster,
            sent_at: at(2),
            rpc: Rpc {
                subtask: src,
                attempt: 0,
                call: Call::AcknowledgeCheckpoint {
                    checkpoint: 1,
                    finished: false,
                },
            },
        };
        let acked = [
            (1, state(ExecutionState::Running)),
            (2, fired(false)),
            (3, ack),
        ];
        let found = feed(&mut CheckpointFailures::new(&g, None), &acked);
        assert!(found[0].contains("must decline"), "{found:?}");
        let survived = [(1, state(ExecutionState::Running)), (2, fired(true))];
        let found = feed(&mut CheckpointFailures::new(&g, None), &survived);
        assert!(found[0].contains("did not fail"), "{found:?}");
        let failed = [
            (1, state(ExecutionState::Running)),
            (2, fired(true)),
            (2, state(ExecutionState::Failed)),
        ];
        assert!(feed(&mut CheckpointFailures::new(&g, None), &failed).is_empty());
        // Only that attempt's failure is owed: another subtask's, or another state, is not it.
        let sink_failed = TraceEvent::TaskState {
            subtask: SubtaskId(1),
            attempt: 0,
            from: ExecutionState::Running,
            to: ExecutionState::Failed,
        };
        let canceling = state(ExecutionState::Canceling);
        for other in [sink_failed, canceling] {
            let events = [
                (1, state(ExecutionState::Running)),
                (2, fired(true)),
                (2, other),
            ];
            let found = feed(&mut CheckpointFailures::new(&g, None), &events);
            assert!(found[0].contains("did not fail"), "{found:?}");
        }
    }
}
