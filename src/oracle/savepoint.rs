//! `stop-with-savepoint` (F1.11), from the oracle's own ledger of the savepoints triggered and
//! completed, what each channel carried and what each task snapshotted:
//! - after a task put a synchronous savepoint's barrier on a channel, no record follows it
//!   there (every source stopped before its barrier, so nothing is left to come after it);
//! - a task attempt that snapshotted the savepoint is not FINISHED before the savepoint
//!   completed (it waits for the savepoint, not for any checkpoint after its final one),
//!   unless it had been told before that a checkpoint covering its final state completed
//!   (Flink's task waits on one future, which that completion had fulfilled already);
//! - a source that stopped without drain, or a task that took EndOfData without drain, never
//!   ends its input (its operators do not finish, so the savepoint can be resumed).
//!
//! It also keeps what `exactly-once-output` needs of a stopped job: whether a savepoint
//! stopped it, and which sources ended their input (a keyed sum emits its totals only when
//! every source before it did).
//!
//! Only in runs with a `stop_with_savepoint` fault.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::{Element, StopMode};
use crate::status::ExecutionState;
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::Instant;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Default)]
struct Ledger {
    attempt: u32,
    /// The savepoint this attempt snapshotted while still waiting for its final checkpoint.
    snapshotted: Option<u64>,
    /// Its first snapshot after end of input (its final checkpoint, F1.5 step 2).
    final_taken: Option<u64>,
    /// It was told that a checkpoint at least as new as `final_taken` completed: its wait was
    /// over before any savepoint, as Flink's one final-checkpoint future (F1.11 step 4).
    final_notified: bool,
    /// It stopped (a source) or took EndOfData without drain.
    no_drain: bool,
}

pub struct Savepoints {
    tasks: Vec<Ledger>,
    /// Per channel: the savepoint whose barrier its producer's current attempt pushed on it.
    barrier_pushed: Vec<Option<u64>>,
    /// Savepoints triggered, with their drain.
    triggered: Vec<(u64, bool)>,
    /// Savepoints completed.
    completed: Vec<u64>,
    /// Per subtask: its current attempt ended its input (drained).
    ended: Vec<bool>,
    /// Per subtask (sources only matter): how far its current attempt's input got (the next
    /// sequence number), from where it was restored and the records it pushed since.
    position: Vec<u64>,
    /// Per (checkpoint, source subtask): its position when it pushed that checkpoint's
    /// barrier, which a restore from the checkpoint resumes from.
    at_barrier: BTreeMap<(u64, u32), u64>,
    is_source: Vec<bool>,
    /// Savepoints some source stopped for with drain.
    drained: Vec<u64>,
    /// Savepoints that failed, or that a JobManager crash lost while pending (F1.11 step 6).
    failed: Vec<u64>,
    /// The savepoint of the stop that keeps this JobMaster's checkpoint scheduler stopped
    /// (F1.11 step 1): triggered, and neither failed, nor followed by a failover, nor lost
    /// with its JobMaster.
    stopping: Option<u64>,
    /// The stop's savepoint was just aborted (its index and time): the very next event must
    /// be its `savepoint_failed` (F1.11 step 5).
    owed_failure: Option<(u64, u64, Instant)>,
    /// Trigger RPCs sent with the wrong call for their checkpoint, judged on delivery.
    /// With the savepoint of the stop under way (or done) when each was sent.
    wrong_trigger: Vec<(Rpc, Option<u64>)>,
}

/// How a savepoint stopped the job, for `exactly-once-output`.
pub struct Stopped<'a> {
    /// Per subtask (sources only matter): its input ended, so a keyed sum after it emits
    /// totals.
    pub ended: &'a [bool],
    /// Per subtask (sources only): the records its last attempt had emitted, counting from
    /// where it was restored (`u64::MAX`: deployed finished on restore, so all of them).
    pub emitted: &'a [u64],
}

impl Savepoints {
    pub fn new(graph: &ExecutionGraph) -> Savepoints {
        Savepoints {
            tasks: vec![Ledger::default(); graph.subtasks.len()],
            barrier_pushed: vec![None; graph.channels.len()],
            triggered: Vec::new(),
            completed: Vec::new(),
            ended: vec![false; graph.subtasks.len()],
            position: vec![0; graph.subtasks.len()],
            at_barrier: BTreeMap::new(),
            drained: Vec::new(),
            failed: Vec::new(),
            stopping: None,
            owed_failure: None,
            wrong_trigger: Vec::new(),
            is_source: graph
                .subtasks
                .iter()
                .map(|s| graph.vertices[s.vertex.index()].chain.is_source())
                .collect(),
        }
    }

    pub fn is_savepoint(&self, n: u64) -> bool {
        self.triggered.iter().any(|&(s, _)| s == n)
    }

    /// A drained stop failed after a source had drained (F1.11 step 5), or a JobManager crash
    /// lost it (step 6): an at-least-once sink may hold keyed totals of inputs the restore
    /// rolled back, as in Flink.
    pub fn drained_then_failed(&self) -> bool {
        self.drained.iter().any(|d| self.failed.contains(d))
    }

    /// The job was stopped by a completed savepoint: what the reference needs.
    pub fn stopped(&self) -> Option<Stopped<'_>> {
        (!self.completed.is_empty()).then_some(Stopped {
            ended: &self.ended,
            emitted: &self.position,
        })
    }

    /// An RPC is sent. F1.11 step 1 with F1.4: the trigger of the stop's savepoint, the
    /// coordinator's or one by hand, is `triggerSavepoint` (a source it reaches stops), and
    /// no other checkpoint's trigger is.
    pub fn sent(&mut self, rpc: Rpc) {
        let wrong = match rpc.call {
            Call::TriggerSavepoint { checkpoint, .. } => self.stopping != Some(checkpoint),
            Call::TriggerCheckpoint(n) => self.stopping == Some(n),
            _ => false,
        };
        if wrong {
            self.wrong_trigger.push((rpc, self.stopping));
        }
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        // F1.11 step 5: the coordinator fails the stop when it aborts the stop's savepoint
        // (Flink's `terminateExceptionally`), and starts its scheduler again.
        let unfailed = self.owed_failure.take().filter(|&(s, ..)| {
            !matches!(*event, TraceEvent::SavepointFailed { checkpoint } if checkpoint == s)
        });
        let found = self.see(graph, index, now, event);
        match unfailed {
            Some((s, at_index, at)) => Some(Violation {
                invariant: Invariant::StopWithSavepoint,
                time: at,
                actors: vec!["CheckpointCoordinator".to_string()],
                event_index: at_index,
                message: format!(
                    "savepoint {s} of the stop under way was aborted, but the stop did not \
                     fail with it (no savepoint_failed at once): the coordinator fails the stop \
                     and starts its checkpoint scheduler again (F1.11 step 5)"
                ),
            }),
            None => found,
        }
    }

    fn see(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        let violation = |subtask: SubtaskId, message: String| Violation {
            invariant: Invariant::StopWithSavepoint,
            time: now,
            actors: vec![graph.subtask_name(subtask).to_string()],
            event_index: index,
            message,
        };
        if let TraceEvent::Rpc {
            to: Address::TaskManager(_),
            rpc,
            ..
        } = *event
        {
            if let Some(i) = self.wrong_trigger.iter().position(|&(r, _)| r == rpc) {
                let stopping = match self.wrong_trigger.remove(i).1 {
                    Some(s) => format!("while savepoint {s} was the stop's"),
                    None => "while no stop was under way".to_owned(),
                };
                return Some(violation(
                    rpc.subtask,
                    format!(
                        "{} attempt {} was sent {:?} {stopping}: the trigger of a stop's \
                         savepoint is triggerSavepoint, and no other checkpoint's is (F1.11 \
                         step 1)",
                        graph.subtask_name(rpc.subtask),
                        rpc.attempt,
                        rpc.call,
                    ),
                ));
            }
        }
        match *event {
            TraceEvent::SavepointTriggered { checkpoint, drain } => {
                self.triggered.push((checkpoint, drain));
                self.stopping = Some(checkpoint);
            }
            TraceEvent::CheckpointCompleted { checkpoint } if self.is_savepoint(checkpoint) => {
                self.completed.push(checkpoint);
            }
            TraceEvent::CheckpointAborted { checkpoint, .. }
                if self.stopping == Some(checkpoint) =>
            {
                self.owed_failure = Some((checkpoint, index, now));
            }
            TraceEvent::CheckpointTriggered { checkpoint } if !self.is_savepoint(checkpoint) => {
                // F1.11 step 1: Flink stops its checkpoint scheduler for a stop-with-savepoint
                // and starts it again only when the savepoint fails (or a new JobMaster,
                // which never heard of the stop, takes over: step 6).
                if let Some(s) = self.stopping {
                    return Some(Violation {
                        invariant: Invariant::StopWithSavepoint,
                        time: now,
                        actors: vec!["JobMaster".to_string()],
                        event_index: index,
                        message: format!(
                            "checkpoint {checkpoint} was triggered while the stop-with-savepoint \
                             of savepoint {s} was under way or done: the checkpoint scheduler \
                             stays stopped unless the savepoint fails (F1.11 step 1)"
                        ),
                    });
                }
            }
            TraceEvent::TaskState {
                subtask,
                attempt,
                to,
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                if t.attempt != attempt {
                    // A new attempt: what the old one pushed is released with its partition.
                    *t = Ledger {
                        attempt,
                        ..Ledger::default()
                    };
                    self.ended[subtask.index()] = false;
                    for gate in &graph.subtasks[subtask.index()].outputs {
                        for c in &gate.channels {
                            self.barrier_pushed[c.index()] = None;
                        }
                    }
                }
                if to == ExecutionState::Finished {
                    if let Some(s) = t.snapshotted.filter(|s| !self.completed.contains(s)) {
                        return Some(violation(
                            subtask,
                            format!(
                                "{} attempt {attempt} is FINISHED, but savepoint {s}, which it \
                                 snapshotted, has not completed: a task that took the \
                                 synchronous savepoint waits for it (F1.11 step 4)",
                                graph.subtask_name(subtask)
                            ),
                        ));
                    }
                }
            }
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                finished,
            } => {
                let savepoint = self.is_savepoint(checkpoint);
                let t = &mut self.tasks[subtask.index()];
                if t.attempt == attempt {
                    if savepoint && !t.final_notified {
                        t.snapshotted = Some(checkpoint);
                    }
                    if finished {
                        t.final_taken.get_or_insert(checkpoint);
                    }
                }
            }
            TraceEvent::Rpc {
                to: Address::TaskManager(_),
                rpc:
                    Rpc {
                        subtask,
                        attempt,
                        call: Call::NotifyCheckpointComplete(n),
                    },
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                if t.attempt == attempt && t.final_taken.is_some_and(|k| n >= k) {
                    t.final_notified = true;
                }
            }
            TraceEvent::Rpc {
                to: Address::TaskManager(_),
                rpc:
                    Rpc {
                        subtask,
                        call: Call::SubmitTask(restore),
                        ..
                    },
                ..
            } => {
                // Read for sources only (what a non-source's entry holds is never used).
                self.position[subtask.index()] = match (restore.finished, restore.checkpoint) {
                    (true, _) => u64::MAX,
                    (false, 0) => 0,
                    (false, c) => self.at_barrier.get(&(c, subtask.0)).copied().unwrap_or(0),
                };
            }
            TraceEvent::Push {
                channel,
                element: Element::Barrier(n),
            } => {
                let from = graph.channels[channel.index()].from;
                if self.is_source[from.index()] {
                    self.at_barrier
                        .insert((n, from.0), self.position[from.index()]);
                }
                if self.is_savepoint(n) {
                    self.barrier_pushed[channel.index()] = Some(n);
                }
            }
            TraceEvent::Push {
                channel,
                element: Element::Record(record),
            } => {
                let from = graph.channels[channel.index()].from;
                // A source's chain pushes only its own records (validation puts no keyed sum,
                // whose totals are its own, behind a source in a chain).
                if self.is_source[from.index()] {
                    let p = &mut self.position[from.index()];
                    *p = (*p).max(record.seq + 1);
                }
                if let Some(s) = self.barrier_pushed[channel.index()].take() {
                    // Once per channel is enough to act on.
                    return Some(violation(
                        from,
                        format!(
                            "{} sent {} on {} after the barrier of savepoint {s}: the \
                             savepoint does not cover it, and the stopped job never processes \
                             it (a source stops before its savepoint's barrier, F1.11 step 2)",
                            graph.subtask_name(from),
                            super::describe_record(graph, &record),
                            graph.channel_name(channel)
                        ),
                    ));
                }
            }
            TraceEvent::SourceStopped {
                subtask,
                checkpoint,
                ..
            } if !self.is_savepoint(checkpoint) => {
                return Some(violation(
                    subtask,
                    format!(
                        "{} stopped for checkpoint {checkpoint}, which is no stop's savepoint: \
                         only the trigger of a synchronous savepoint (triggerSavepoint) stops a \
                         source (F1.11 step 2)",
                        graph.subtask_name(subtask)
                    ),
                ));
            }
            TraceEvent::SourceStopped {
                checkpoint,
                drain: true,
                ..
            } => self.drained.push(checkpoint),
            // A source may stop for a savepoint already aborted: its trigger was on the way.
            TraceEvent::SavepointFailed { checkpoint } => {
                self.failed.push(checkpoint);
                if self.stopping == Some(checkpoint) {
                    self.stopping = None;
                }
            }
            // F1.11 step 6: a JobManager crash loses a savepoint still pending, without a
            // `savepoint_failed` (the new JobMaster never heard of it); the job goes on from
            // its latest completed checkpoint, as after a failed savepoint.
            // A failover runs the job again, and with it the scheduler (Flink's
            // `CheckpointCoordinatorDeActivator`), even after a completed savepoint.
            TraceEvent::Failover { .. } => self.stopping = None,
            TraceEvent::JobMasterLost { .. } => {
                self.stopping = None; // even a completed stop: the new JobMaster knows of none
                let lost: Vec<u64> = (self.triggered.iter())
                    .map(|&(s, _)| s)
                    .filter(|s| !self.completed.contains(s) && !self.failed.contains(s))
                    .collect();
                self.failed.extend(lost);
            }
            TraceEvent::SourceStopped {
                subtask,
                attempt,
                drain: false,
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                if t.attempt == attempt {
                    t.no_drain = true;
                }
            }
            TraceEvent::Take {
                subtask,
                element: Element::EndOfData(StopMode::NoDrain),
                ..
            } => self.tasks[subtask.index()].no_drain = true,
            TraceEvent::EndOfInput { subtask } => {
                if self.tasks[subtask.index()].no_drain {
                    return Some(violation(
                        subtask,
                        format!(
                            "{} ended its input after a stop without drain: its operators \
                             finish (a keyed sum emits its totals), so the savepoint cannot be \
                             resumed (F1.11 step 2)",
                            graph.subtask_name(subtask)
                        ),
                    ));
                }
                self.ended[subtask.index()] = true;
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ChannelId;
    use crate::record::Record;

    /// `src[0]` (subtask 0) → `sink[0]` (subtask 1) on channel 0.
    fn graph() -> ExecutionGraph {
        crate::oracle::tests::source_to_sink()
    }

    fn record(seq: u64) -> Element {
        Element::Record(Record {
            origin: SubtaskId(0),
            key: 1,
            seq,
            value: 1,
        })
    }

    fn push(element: Element) -> TraceEvent {
        TraceEvent::Push {
            channel: ChannelId(0),
            element,
        }
    }

    fn run(events: &[TraceEvent]) -> Vec<u64> {
        let g = graph();
        let mut o = Savepoints::new(&g);
        (0..)
            .zip(events)
            .filter_map(|(i, e)| o.observe(&g, i, Instant::ZERO, e).map(|v| v.event_index))
            .collect()
    }

    const TRIGGERED: TraceEvent = TraceEvent::SavepointTriggered {
        checkpoint: 2,
        drain: false,
    };

    /// F1.11 step 1: while a stop is under way or done, the scheduler triggers nothing; once
    /// its savepoint failed (or a JobManager crash lost it, step 6) it runs again.
    #[test]
    fn no_checkpoint_is_triggered_during_a_stop_unless_its_savepoint_failed() {
        let triggered = |checkpoint| TraceEvent::CheckpointTriggered { checkpoint };
        let completed = TraceEvent::CheckpointCompleted { checkpoint: 2 };
        let failed = TraceEvent::SavepointFailed { checkpoint: 2 };
        let lost = TraceEvent::JobMasterLost { incarnation: 0 };
        assert!(run(&[TRIGGERED, completed, lost, triggered(3)]).is_empty());
        assert!(run(&[triggered(1), TRIGGERED, triggered(2)]).is_empty());
        assert_eq!(run(&[TRIGGERED, triggered(2), triggered(3)]), [2]);
        assert_eq!(run(&[TRIGGERED, completed, triggered(3)]), [2]);
        assert!(run(&[TRIGGERED, triggered(2), failed, triggered(3)]).is_empty());
        assert!(run(&[TRIGGERED, triggered(2), lost, triggered(3)]).is_empty());
    }

    #[test]
    fn a_record_after_the_savepoints_barrier_is_a_violation_once_per_channel() {
        let events = [
            TRIGGERED,
            push(record(0)),
            push(Element::Barrier(1)),
            push(record(1)), // after a checkpoint's barrier: fine
            push(Element::Barrier(2)),
            push(record(2)), // after the savepoint's: not
            push(record(3)),
        ];
        assert_eq!(run(&events), [5]);
    }

    #[test]
    fn a_task_that_took_the_savepoint_waits_for_it_unless_its_final_wait_was_over() {
        let snapshot = |checkpoint, finished| TraceEvent::Snapshot {
            subtask: SubtaskId(0),
            attempt: 0,
            checkpoint,
            finished,
        };
        let finished = TraceEvent::TaskState {
            subtask: SubtaskId(0),
            attempt: 0,
            from: ExecutionState::Running,
            to: ExecutionState::Finished,
        };
        let notified = TraceEvent::Rpc {
            from: Address::JobMaster,
            to: Address::TaskManager(0),
            sent_at: Instant::ZERO,
            rpc: Rpc {
                subtask: SubtaskId(0),
                attempt: 0,
                call: Call::NotifyCheckpointComplete(1),
            },
        };
        let completed = TraceEvent::CheckpointCompleted { checkpoint: 2 };
        // Final checkpoint 1 pending when it snapshots savepoint 2: it must wait for 2.
        assert_eq!(
            run(&[TRIGGERED, snapshot(1, true), snapshot(2, true), finished]),
            [3]
        );
        assert!(run(&[
            TRIGGERED,
            snapshot(1, true),
            snapshot(2, true),
            completed,
            finished
        ])
        .is_empty());
        // Told that 1 completed before it took 2: its wait was over (Flink's one future).
        assert!(run(&[
            TRIGGERED,
            snapshot(1, true),
            notified,
            snapshot(2, true),
            finished
        ])
        .is_empty());
    }

    #[test]
    fn no_input_ends_after_a_stop_without_drain() {
        let stopped = |drain| TraceEvent::SourceStopped {
            subtask: SubtaskId(0),
            attempt: 0,
            checkpoint: 2,
            drain,
        };
        let ended = |s| TraceEvent::EndOfInput {
            subtask: SubtaskId(s),
        };
        let took = TraceEvent::Take {
            subtask: SubtaskId(1),
            channel: ChannelId(0),
            element: Element::EndOfData(StopMode::NoDrain),
        };
        assert_eq!(run(&[TRIGGERED, stopped(false), ended(0)]), [2]);
        // Only a savepoint's trigger stops a source.
        assert_eq!(run(&[stopped(false)]), [0]);
        assert!(run(&[TRIGGERED, stopped(true), ended(0)]).is_empty());
        assert_eq!(run(&[TRIGGERED, took, ended(1)]), [2]);
    }

    /// F1.11 step 6: a JobManager crash loses a drain's pending savepoint without a
    /// `savepoint_failed`; its totals count as a failed drain's. One that completed before the
    /// crash is not lost.
    #[test]
    fn a_jobmanager_crash_loses_a_pending_savepoint() {
        let g = graph();
        let drained = TraceEvent::SourceStopped {
            subtask: SubtaskId(0),
            attempt: 0,
            checkpoint: 2,
            drain: true,
        };
        let lost = TraceEvent::JobMasterLost { incarnation: 0 };
        let completed = TraceEvent::CheckpointCompleted { checkpoint: 2 };
        let outcome = |events: &[TraceEvent]| {
            let mut o = Savepoints::new(&g);
            for (i, e) in (0..).zip(events) {
                assert!(o.observe(&g, i, Instant::ZERO, e).is_none());
            }
            (o.drained_then_failed(), o.stopped().is_some())
        };
        assert_eq!(outcome(&[TRIGGERED, drained]), (false, false));
        assert_eq!(outcome(&[TRIGGERED, drained, lost]), (true, false));
        assert_eq!(
            outcome(&[TRIGGERED, drained, completed, lost]),
            (false, true)
        );
    }
    /// F1.11 step 5: the stop fails the moment its savepoint is aborted; another checkpoint's
    /// abort owes nothing.
    #[test]
    fn an_aborted_savepoint_fails_the_stop_at_once() {
        let aborted = |checkpoint| TraceEvent::CheckpointAborted {
            checkpoint,
            reason: crate::trace::AbortReason::Expired,
        };
        let failed = TraceEvent::SavepointFailed { checkpoint: 2 };
        let triggered = TraceEvent::CheckpointTriggered { checkpoint: 3 };
        assert!(run(&[TRIGGERED, aborted(2), failed, triggered]).is_empty());
        assert_eq!(run(&[TRIGGERED, aborted(2), triggered]), [1]);
        assert_eq!(run(&[TRIGGERED, aborted(2), aborted(1), failed]), [1]);
        assert!(run(&[TRIGGERED, aborted(1), failed]).is_empty());
    }

    /// Each attempt keeps its own ledger: a later attempt that took the savepoint waits for
    /// it too, and a notice to another attempt ends no wait of this one.
    #[test]
    fn an_attempts_ledger_is_its_own() {
        let snapshot = |attempt, checkpoint| TraceEvent::Snapshot {
            subtask: SubtaskId(0),
            attempt,
            checkpoint,
            finished: true,
        };
        let state = |attempt, to| TraceEvent::TaskState {
            subtask: SubtaskId(0),
            attempt,
            from: ExecutionState::Running,
            to,
        };
        let notified = |attempt| TraceEvent::Rpc {
            from: Address::JobMaster,
            to: Address::TaskManager(0),
            sent_at: Instant::ZERO,
            rpc: Rpc {
                subtask: SubtaskId(0),
                attempt,
                call: Call::NotifyCheckpointComplete(1),
            },
        };
        let finished = |attempt| state(attempt, ExecutionState::Finished);
        let later = [
            state(1, ExecutionState::Running),
            TRIGGERED,
            snapshot(1, 1),
            snapshot(1, 2),
            finished(1),
        ];
        assert_eq!(run(&later), [4]);
        let stale = [
            TRIGGERED,
            snapshot(0, 1),
            notified(1),
            snapshot(0, 2),
            finished(0),
        ];
        assert_eq!(run(&stale), [4]);
    }

    /// `exactly-once-output` judges a job stopped by its savepoint (not by any checkpoint)
    /// by where each source got: a restore rewinds a source to its position at the restored
    /// checkpoint's barrier.
    #[test]
    fn a_stopped_jobs_sources_count_from_where_they_were_restored() {
        let g = graph();
        let mut o = Savepoints::new(&g);
        let submit = TraceEvent::Rpc {
            from: Address::JobMaster,
            to: Address::TaskManager(0),
            sent_at: Instant::ZERO,
            rpc: Rpc {
                subtask: SubtaskId(0),
                attempt: 1,
                call: Call::SubmitTask(crate::trace::Restore {
                    checkpoint: 1,
                    finished: false,
                }),
            },
        };
        let completed = |checkpoint| TraceEvent::CheckpointCompleted { checkpoint };
        let before = [
            push(record(0)),
            push(record(1)),
            push(Element::Barrier(1)),
            push(record(2)),
            push(record(3)),
            completed(1),
        ];
        let after = [
            submit,
            push(record(2)),
            TRIGGERED,
            push(Element::Barrier(2)),
            completed(2),
        ];
        for (i, e) in (0..).zip(&before) {
            assert!(o.observe(&g, i, Instant::ZERO, e).is_none());
        }
        assert!(o.stopped().is_none(), "checkpoint 1 is no savepoint");
        for (i, e) in (6..).zip(&after) {
            assert!(o.observe(&g, i, Instant::ZERO, e).is_none());
        }
        assert_eq!(o.stopped().map(|s| s.emitted[0]), Some(3));
    }
    /// F1.11 step 1 with F1.4: while a stop is under way or done, its savepoint's trigger (by
    /// the coordinator or by hand) is triggerSavepoint and no other checkpoint's is; a
    /// trigger on its way when the savepoint failed is judged by when it was sent.
    #[test]
    fn only_the_stops_savepoint_is_triggered_with_trigger_savepoint() {
        let g = graph();
        let rpc = |call| Rpc {
            subtask: SubtaskId(0),
            attempt: 0,
            call,
        };
        let savepoint = |checkpoint| {
            rpc(Call::TriggerSavepoint {
                checkpoint,
                drain: false,
            })
        };
        let checkpoint = |n| rpc(Call::TriggerCheckpoint(n));
        let delivered = |rpc| TraceEvent::Rpc {
            from: Address::JobMaster,
            to: Address::TaskManager(0),
            sent_at: Instant::ZERO,
            rpc,
        };
        let failed = TraceEvent::SavepointFailed { checkpoint: 2 };
        // Each case: the events before the send, the RPC, the events before its delivery.
        let judge = |before: &[TraceEvent], sent: Rpc, between: &[TraceEvent]| {
            let mut o = Savepoints::new(&g);
            for e in before {
                assert!(o.observe(&g, 0, Instant::ZERO, e).is_none());
            }
            o.sent(sent);
            for e in between {
                assert!(o.observe(&g, 0, Instant::ZERO, e).is_none());
            }
            o.observe(&g, 1, Instant::ZERO, &delivered(sent)).is_some()
        };
        assert!(!judge(&[TRIGGERED], savepoint(2), &[failed]));
        assert!(!judge(&[TRIGGERED], checkpoint(1), &[]));
        assert!(!judge(&[TRIGGERED, failed], checkpoint(2), &[]));
        assert!(judge(&[TRIGGERED], checkpoint(2), &[]));
        assert!(judge(&[TRIGGERED], savepoint(1), &[]));
        assert!(judge(&[], savepoint(2), &[TRIGGERED]));
        // A right trigger delivered while a wrong one is still on its way is no violation.
        let mut o = Savepoints::new(&g);
        assert!(o.observe(&g, 0, Instant::ZERO, &TRIGGERED).is_none());
        o.sent(checkpoint(2));
        o.sent(savepoint(2));
        assert!(o
            .observe(&g, 1, Instant::ZERO, &delivered(savepoint(2)))
            .is_none());
        assert!(o
            .observe(&g, 2, Instant::ZERO, &delivered(checkpoint(2)))
            .is_some());
    }
}
