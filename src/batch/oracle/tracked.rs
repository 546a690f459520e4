//! `minimal-rerun`'s ledger of the partitions each JobMaster tracks (P2.3, P2.4): a JobMaster
//! never asks a TaskManager to release a partition it still tracks, since its consumers read
//! it and would otherwise fail with a missing partition and run its producer again.
//!
//! The ledger is the oracle's own, from the trace: where each attempt was deployed
//! (`deployed`) and which partitions were reported to the JobMaster now leading (`offered`). A
//! JobMaster starts tracking an attempt's partition when it sees that attempt go from RUNNING
//! to FINISHED (it ran under this JobMaster), or see it FINISHED otherwise (a recovery kept it,
//! a reconcile window adopted it) if its partition was reported to it and not released since:
//! a recovery keeps a finish whose partition nobody needs without tracking it. It stops when it
//! resets the subtask (a new attempt, `subtask_reset`), when it times out the TaskManager that
//! holds it (P2.3: partitions survive on live TaskManagers only), when it dies (a new
//! JobMaster tracks nothing until it recovers or adopts) and when a reconcile window ends
//! FAILING (P3.4: a fresh execution graph).
//!
//! A reset releases the old partition just before it records `subtask_reset` (the JobMaster
//! stops tracking and releases, then makes the new attempt). So a release of a tracked
//! partition is held as a suspect until the end of its instant: the subtask's reset in that
//! instant clears it; anything at a later instant, or the end of the run, finds it a violation.
//!
//! The other side of the same rule (F2.4 step 3): while a recovery waits for reports (P2.4), a
//! reported partition the durable job events do not name as finished there (another attempt,
//! or another place) has a producer that did not finish, and is released as it is reported,
//! in the same instant, not kept until the wait ends. Outside the wait (F2.4: a TaskManager
//! that registers is asked what it holds) a reported partition is released as it is reported
//! too, unless it is the very one the JobMaster tracks (that attempt, on that TaskManager);
//! only a reconcile window (the job RECONCILING) holds reports until it ends (P3.4), and
//! `reconcile-outcome` judges those.

use crate::batch::events::Location;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{ReconcileOutcome, TraceEvent};
use sim::Instant;
use std::collections::BTreeMap;

#[derive(Default)]
pub(super) struct Tracked {
    /// Per attempt: the TaskManager it was deployed to (attempt numbers are unique per subtask
    /// for the whole run, across JobMasters).
    deployed: BTreeMap<(SubtaskId, u32), u32>,
    /// Partitions reported to the JobMaster now leading, not released since, and where.
    offered: BTreeMap<(SubtaskId, u32), u32>,
    /// Per subtask: the attempt whose partition the current JobMaster tracks, and where.
    tracked: BTreeMap<SubtaskId, (u32, u32)>,
    /// Releases of tracked partitions not yet explained by a reset in their instant: subtask,
    /// attempt, TaskManager, when, the release's event index.
    suspects: Vec<(SubtaskId, u32, u32, Instant, u64)>,
    /// While a recovery waits for reports (P2.4): per subtask, the finish the durable job
    /// events name (attempt, TaskManager, process; remote finishes are not reported).
    awaited: Option<BTreeMap<SubtaskId, (u32, u32, u32)>>,
    /// Reported partitions the JobMaster must release in the instant of the report, not yet
    /// released: subtask, attempt, TaskManager, when, the report's event index, and whether a
    /// recovery waited (F2.4 step 3) or not (F2.4).
    unclaimed: Vec<(SubtaskId, u32, u32, Instant, u64, bool)>,
    /// A reconcile window is open (the job is RECONCILING): it decides what it keeps of the
    /// reports when it ends (P3.4), so nothing is due at once.
    reconciling: bool,
}

impl Tracked {
    /// Follows `event`; returns a violation (its instant, event index and message) once a
    /// release of a tracked partition is known to be no reset's.
    pub(super) fn observe(
        &mut self,
        graph: &ExecutionGraph,
        (now, index): (Instant, u64),
        event: &TraceEvent,
    ) -> Option<(Instant, u64, String)> {
        let found = self.settle(graph, now);
        match *event {
            TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                ..
            } => {
                self.deployed.insert((subtask, attempt), task_manager);
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to: ExecutionState::Finished,
            } => {
                let at = if from == ExecutionState::Running {
                    self.deployed.get(&(subtask, attempt))
                } else {
                    self.offered.get(&(subtask, attempt))
                };
                match at {
                    Some(&tm) => {
                        self.tracked.insert(subtask, (attempt, tm));
                    }
                    None => {
                        self.tracked.remove(&subtask);
                    }
                }
            }
            TraceEvent::SubtaskReset { subtask, .. } => {
                // P2.2: the reset makes a new attempt; its old partition is released with it.
                self.tracked.remove(&subtask);
                self.suspects
                    .retain(|&(s, _, _, at, _)| s != subtask || at != now);
            }
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                // P2.3: the JobMaster stops tracking what the lost TaskManager held.
                self.tracked.retain(|_, &mut (_, tm)| tm != task_manager);
                self.offered.retain(|_, &mut tm| tm != task_manager);
            }
            // A new JobMaster starts from nothing: it tracks only what it sees finish.
            TraceEvent::JobMasterLost { .. } => {
                self.tracked.clear();
                self.offered.clear();
                self.awaited = None;
            }
            TraceEvent::RecoveryEnded { .. } => self.awaited = None,
            TraceEvent::JobStatus { to, .. } => self.reconciling = to == JobStatus::Reconciling,
            // A reconcile window that ends FAILING makes a fresh execution graph (P3.4), which
            // recovers from the partitions the window's reports offered.
            TraceEvent::ReconcileEnded {
                outcome: ReconcileOutcome::Failing,
                ..
            } => self.tracked.clear(),
            TraceEvent::ReleaseRequested {
                task_manager,
                subtask,
                attempt,
            } => {
                self.offered.remove(&(subtask, attempt));
                self.unclaimed.retain(|&(s, a, tm, at, _, _)| {
                    (s, a, tm, at) != (subtask, attempt, task_manager, now)
                });
                if self.tracked.get(&subtask) == Some(&(attempt, task_manager)) {
                    self.suspects
                        .push((subtask, attempt, task_manager, now, index));
                }
            }
            _ => {}
        }
        found
    }

    /// A recovery starts waiting for reports: `finished` is what the durable job events name
    /// (per subtask, attempt and place), as the oracle replays them.
    pub(super) fn recovery_started(&mut self, finished: &BTreeMap<SubtaskId, (u32, Location)>) {
        let on_task_managers =
            finished
                .iter()
                .filter_map(|(&s, &(attempt, location))| match location {
                    Location::TaskManager {
                        task_manager,
                        process,
                    } => Some((s, (attempt, task_manager, process))),
                    Location::Remote => None,
                });
        self.awaited = Some(on_task_managers.collect());
    }

    /// TaskManager `tm`'s process `process` reported the partition of `attempt` of `subtask`
    /// to the JobMaster now leading, which took the report at `(now, index)`.
    pub(super) fn reported(
        &mut self,
        (tm, process): (u32, u32),
        (subtask, attempt): (SubtaskId, u32),
        (now, index): (Instant, u64),
    ) {
        self.offered.insert((subtask, attempt), tm);
        let waiting = self.awaited.is_some();
        let due = match &self.awaited {
            // F2.4 step 3: its producer did not finish, as far as the job events know.
            Some(awaited) => awaited.get(&subtask) != Some(&(attempt, tm, process)),
            // P3.4: the window decides when it ends.
            None if self.reconciling => false,
            // F2.4: a report is answered by a release, unless the JobMaster tracks that very
            // partition already (a report that crossed a registration).
            None => self.tracked.get(&subtask) != Some(&(attempt, tm)),
        };
        if due {
            self.unclaimed
                .push((subtask, attempt, tm, now, index, waiting));
        }
    }

    /// The end of the run: a suspect left is a violation.
    pub(super) fn finish(&mut self, graph: &ExecutionGraph) -> Option<(Instant, u64, String)> {
        self.settle(graph, Instant::MAX)
    }

    /// The first suspect of an instant before `now`, as a violation; the others go with it
    /// (one violation per invariant is reported).
    fn settle(&mut self, graph: &ExecutionGraph, now: Instant) -> Option<(Instant, u64, String)> {
        if let Some(&(s, attempt, tm, at, index, waiting)) = self.unclaimed.first() {
            if at < now {
                self.unclaimed.clear();
                let name = graph.subtask_name(s);
                let message = if waiting {
                    format!(
                        "TaskManager{tm} reported the partition of {name} (attempt {attempt}) \
                         while the recovery waited, which the durable job events do not name \
                         as finished there, and the JobMaster did not release it at once (F2.4 \
                         step 3: a partition whose producer did not finish is released)"
                    )
                } else {
                    format!(
                        "TaskManager{tm} reported the partition of {name} (attempt {attempt}), \
                         which the JobMaster does not track, and the JobMaster did not release \
                         it at once (F2.4: outside a recovery's wait, a reported partition is \
                         released unless it is the one the JobMaster tracks)"
                    )
                };
                return Some((at, index, message));
            }
        }
        let &(s, attempt, tm, at, index) = self.suspects.first()?;
        if at >= now {
            return None;
        }
        self.suspects.clear();
        let name = graph.subtask_name(s);
        Some((
            at,
            index,
            format!(
                "the JobMaster asked TaskManager{tm} to release the partition of {name} (attempt \
                 {attempt}), which it still tracks and did not reset: its consumers read it \
                 (P2.3, P2.4: a JobMaster releases only partitions it no longer tracks)"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    //! Each way a JobMaster starts and stops tracking a partition, fed to the ledger of a
    //! batch job `src` (2 subtasks) → `sink` (1) as the trace would tell it.

    use super::*;
    use crate::trace::RerunReason;
    use ExecutionState::{Created, Finished, Reconciling, Running};

    fn graph() -> ExecutionGraph {
        crate::batch::oracle::tests::src_to_sink(2)
    }

    const SRC0: SubtaskId = SubtaskId(0);
    const SRC1: SubtaskId = SubtaskId(1);

    /// Feeds `events` at the given milliseconds; returns the first violation's event index.
    fn run(events: &[(u64, TraceEvent)]) -> Option<u64> {
        let graph = graph();
        let mut ledger = Tracked::default();
        for (index, (ms, event)) in events.iter().enumerate() {
            let at = Instant::ZERO + sim::Duration::from_millis(*ms);
            if let Some((_, i, _)) = ledger.observe(&graph, (at, index as u64), event) {
                return Some(i);
            }
        }
        ledger.finish(&graph).map(|(_, i, _)| i)
    }

    fn deployed(subtask: SubtaskId, attempt: u32, task_manager: u32) -> TraceEvent {
        TraceEvent::Deployed {
            subtask,
            attempt,
            task_manager,
            speculative: false,
        }
    }

    fn state(subtask: SubtaskId, attempt: u32, from: ExecutionState) -> TraceEvent {
        TraceEvent::ExecutionState {
            subtask,
            attempt,
            from,
            to: Finished,
        }
    }

    fn release(subtask: SubtaskId, attempt: u32, task_manager: u32) -> TraceEvent {
        TraceEvent::ReleaseRequested {
            task_manager,
            subtask,
            attempt,
        }
    }

    fn reset(subtask: SubtaskId) -> TraceEvent {
        TraceEvent::SubtaskReset {
            subtask,
            reason: RerunReason::Failover,
        }
    }

    /// src[0] attempt 0 ran on TaskManager1 and finished under this JobMaster.
    fn finished_here() -> Vec<(u64, TraceEvent)> {
        vec![(0, deployed(SRC0, 0, 1)), (5, state(SRC0, 0, Running))]
    }

    #[test]
    fn releasing_a_partition_it_tracks_is_a_violation_at_the_end_of_its_instant() {
        let mut events = finished_here();
        events.push((7, release(SRC0, 0, 1)));
        assert_eq!(run(&events), Some(2), "found at the end of the run");
        events.push((8, deployed(SRC1, 0, 0)));
        assert_eq!(run(&events), Some(2), "found at the next instant");
    }

    #[test]
    fn a_reset_in_the_same_instant_explains_the_release() {
        let mut events = finished_here();
        events.extend([(7, release(SRC0, 0, 1)), (7, reset(SRC0))]);
        assert_eq!(run(&events), None);
        // A reset at a later instant does not, nor does another subtask's reset.
        let mut late = finished_here();
        late.extend([(7, release(SRC0, 0, 1)), (8, reset(SRC0))]);
        assert_eq!(run(&late), Some(2));
        let mut other = finished_here();
        other.extend([
            (6, deployed(SRC1, 0, 0)),
            (6, state(SRC1, 0, Running)),
            (7, release(SRC0, 0, 1)),
            (7, reset(SRC1)),
        ]);
        assert_eq!(run(&other), Some(4));
    }

    #[test]
    fn other_attempts_and_other_places_are_not_tracked() {
        let mut events = finished_here();
        events.extend([(7, release(SRC0, 1, 1)), (7, release(SRC0, 0, 0))]);
        assert_eq!(run(&events), None);
    }

    #[test]
    fn a_lost_taskmanager_a_dead_jobmaster_or_a_failing_window_tracks_nothing() {
        for forget in [
            TraceEvent::TaskManagerTimedOut { task_manager: 1 },
            TraceEvent::JobMasterLost { incarnation: 0 },
            TraceEvent::ReconcileEnded {
                outcome: ReconcileOutcome::Failing,
                reported: 0,
                missing: 1,
            },
        ] {
            let mut events = finished_here();
            events.extend([(6, forget), (7, release(SRC0, 0, 1))]);
            assert_eq!(run(&events), None, "{forget:?}");
        }
        // A timeout of another TaskManager, or a window that ends RUNNING, forgets nothing.
        for keep in [
            TraceEvent::TaskManagerTimedOut { task_manager: 0 },
            TraceEvent::ReconcileEnded {
                outcome: ReconcileOutcome::Running,
                reported: 1,
                missing: 0,
            },
        ] {
            let mut events = finished_here();
            events.extend([(6, keep), (7, release(SRC0, 0, 1))]);
            assert_eq!(run(&events), Some(3), "{keep:?}");
        }
    }

    /// F2.4 step 3: during the wait, a report the job events do not name (another attempt,
    /// another place) is released in its instant; the one they name is kept.
    #[test]
    fn a_report_the_job_events_do_not_name_is_released_at_once() {
        let graph = graph();
        let at = |ms| Instant::ZERO + sim::Duration::from_millis(ms);
        let logged = BTreeMap::from([(
            SRC0,
            (
                0,
                Location::TaskManager {
                    task_manager: 1,
                    process: 0,
                },
            ),
        )]);
        // (reported attempt, TaskManager, process, released at ms): the violation's index.
        let cases = [
            ((0, 1, 0, None), None),
            ((1, 1, 0, Some(3)), None),
            ((1, 1, 0, Some(4)), Some(1)),
            ((1, 1, 0, None), Some(1)),
            ((0, 0, 0, None), Some(1)),
            ((0, 1, 1, None), Some(1)),
        ];
        for ((attempt, tm, process, released), want) in cases {
            let mut ledger = Tracked::default();
            ledger.recovery_started(&logged);
            ledger.reported((tm, process), (SRC0, attempt), (at(3), 1));
            let mut found = None;
            if let Some(ms) = released {
                found = found.or(ledger.observe(&graph, (at(ms), 2), &release(SRC0, attempt, tm)));
            }
            found = found.or(ledger.finish(&graph));
            let got = found.map(|(_, i, _)| i);
            assert_eq!(
                got, want,
                "attempt {attempt} on {tm}/{process}, released {released:?}"
            );
        }
        // Once the wait ended, the rule is F2.4's, below.
        let mut ledger = Tracked::default();
        ledger.recovery_started(&logged);
        ledger.observe(
            &graph,
            (at(2), 0),
            &TraceEvent::RecoveryEnded {
                recovered: 0,
                rerun: 0,
                timed_out: true,
            },
        );
        ledger.reported((1, 0), (SRC0, 1), (at(3), 1));
        let (_, index, message) = ledger.finish(&graph).expect("due at once");
        assert_eq!(index, 1);
        assert!(message.contains("does not track"), "{message}");
    }

    /// F2.4: outside a recovery's wait, a reported partition is released in its instant
    /// unless it is the very one the JobMaster tracks (that attempt on that TaskManager); in
    /// a reconcile window nothing is due until the window ends (P3.4).
    #[test]
    fn outside_the_wait_a_report_of_an_untracked_partition_is_released_at_once() {
        let graph = graph();
        let at = |ms| Instant::ZERO + sim::Duration::from_millis(ms);
        let status = |from, to| TraceEvent::JobStatus { from, to };
        // (reported attempt, TaskManager, released at ms, in a window): the violation's index.
        let cases = [
            ((0, 1, None, false), None),
            ((1, 1, Some(6), false), None),
            ((1, 1, None, false), Some(2)),
            ((1, 1, Some(7), false), Some(2)),
            ((0, 0, None, false), Some(2)),
            ((1, 1, None, true), None),
            ((0, 0, None, true), None),
        ];
        for ((attempt, tm, released, window), want) in cases {
            let mut ledger = Tracked::default();
            let mut found = None;
            for (i, (ms, event)) in finished_here().into_iter().enumerate() {
                found = found.or(ledger.observe(&graph, (at(ms), i as u64), &event));
            }
            if window {
                let reconciling = status(JobStatus::Running, JobStatus::Reconciling);
                found = found.or(ledger.observe(&graph, (at(6), 2), &reconciling));
            }
            ledger.reported((tm, 0), (SRC0, attempt), (at(6), 2));
            if let Some(ms) = released {
                found = found.or(ledger.observe(&graph, (at(ms), 3), &release(SRC0, attempt, tm)));
            }
            found = found.or(ledger.finish(&graph));
            assert_eq!(
                found.map(|(_, i, _)| i),
                want,
                "attempt {attempt} on TaskManager{tm}, released {released:?}, window {window}"
            );
        }
    }

    #[test]
    fn a_recovered_or_adopted_finish_is_tracked_only_if_its_partition_was_reported() {
        for from in [Created, Reconciling] {
            // Kept without a report (nobody needs the partition): not tracked.
            let unreported = [
                (0, deployed(SRC0, 0, 1)),
                (5, TraceEvent::JobMasterLost { incarnation: 0 }),
                (6, state(SRC0, 0, from)),
                (7, release(SRC0, 0, 1)),
            ];
            assert_eq!(run(&unreported), None, "{from:?}");
            // Reported, then kept: tracked.
            let graph = graph();
            let mut ledger = Tracked::default();
            let at = |ms| Instant::ZERO + sim::Duration::from_millis(ms);
            ledger.observe(&graph, (at(0), 0), &deployed(SRC0, 0, 1));
            ledger.observe(
                &graph,
                (at(5), 1),
                &TraceEvent::JobMasterLost { incarnation: 0 },
            );
            ledger.reported((1, 0), (SRC0, 0), (at(5), 2));
            ledger.observe(&graph, (at(6), 2), &state(SRC0, 0, from));
            ledger.observe(&graph, (at(7), 3), &release(SRC0, 0, 1));
            assert_eq!(
                ledger.finish(&graph).map(|(_, i, _)| i),
                Some(3),
                "{from:?}"
            );
            // Reported, then its TaskManager timed out before the finish was kept: not tracked.
            let mut ledger = Tracked::default();
            ledger.observe(&graph, (at(0), 0), &deployed(SRC0, 0, 1));
            let lost = TraceEvent::JobMasterLost { incarnation: 0 };
            ledger.observe(&graph, (at(5), 1), &lost);
            ledger.reported((1, 0), (SRC0, 0), (at(5), 2));
            let timed_out = TraceEvent::TaskManagerTimedOut { task_manager: 1 };
            ledger.observe(&graph, (at(6), 3), &timed_out);
            ledger.observe(&graph, (at(7), 4), &state(SRC0, 0, from));
            ledger.observe(&graph, (at(8), 5), &release(SRC0, 0, 1));
            assert!(ledger.finish(&graph).is_none(), "{from:?}");
        }
    }
}
