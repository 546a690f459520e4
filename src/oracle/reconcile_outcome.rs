//! `reconcile-outcome` for streaming jobs (P3.1, P3.2, P3.4): a reconcile window closes as
//! soon as every TaskManager it waits for has sent its whole report (or at
//! `reconcile_timeout`, never earlier), ends with the outcome and counts the reports call for,
//! and applies each reported state to the reported attempt.
//!
//! The ledger is the oracle's own: which TaskManagers the job used (a deployment was sent to
//! them, from the send ledger), which reports reached the reconciling JobMaster (the `rpc`
//! events), which TaskManagers its heartbeat gave up on in the window, and the JobMaster's view
//! of each execution (its `execution_state` events). The states the JobMaster applies when the
//! window closes are the `execution_state` events recorded right before `reconcile_ended`, so
//! the oracle holds them back until it knows whether the window closed.
//!
//! A window that ends RUNNING keeps the tasks, and with them whatever they hold for the
//! checkpoints the dead coordinator left pending (P3.4: the new coordinator first aborts them).
//! The oracle keeps its own list of checkpoints pending when each JobMaster died, from the
//! `checkpoint_*` events, and requires an abort notice of each to every execution the window
//! keeps unfinished, sent in the instant the window ends.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Address, Call, ReconcileOutcome as Outcome, Rpc, TraceEvent};
use sim::{Duration, Instant};
use std::collections::BTreeSet;

/// P3.4's table, for the streaming and the batch ledger alike: the reasons for FAILING found in
/// the reports, else FINISHED when every execution is, else RUNNING; the JobMaster's `outcome`
/// must be that, and its counts (executions reported, TaskManagers missing) the ledger's.
pub(crate) fn judge(
    outcome: Outcome,
    (failing, all_finished): (&[String], bool),
    (reported, missing): (u32, u32),
    (want_reported, want_missing): (u32, u32),
) -> Option<String> {
    let want = if !failing.is_empty() {
        Outcome::Failing
    } else if all_finished {
        Outcome::Finished
    } else {
        Outcome::Running
    };
    if want != outcome {
        let why = match (failing.is_empty(), all_finished) {
            (false, _) => failing.join("; "),
            (true, true) => "every TaskManager reported and every execution is FINISHED".into(),
            (true, false) => "every TaskManager reported and no execution is FAILED, CANCELED \
                              or unknown"
                .into(),
        };
        return Some(format!(
            "the reconcile window ended {}, but the reports call for {}: {why} (P3.4)",
            outcome.name(),
            want.name()
        ));
    }
    ((reported, missing) != (want_reported, want_missing)).then(|| {
        format!(
            "the reconcile window ended with {reported} executions reported and {missing} \
             TaskManagers missing, but {want_reported} executions were reported by processes \
             still expected and {want_missing} TaskManagers did not finish their report (P3.4)"
        )
    })
}

pub struct ReconcileOutcome {
    timeout: Duration,
    /// Per TaskManager: a deployment of the job was sent to it (P3.1: the new JobMaster
    /// waits for its report).
    hosted: Vec<bool>,
    /// Per subtask: the JobMaster's view (attempt, state), up to the held-back events.
    view: Vec<Option<(u32, ExecutionState)>>,
    window: Option<Window>,
    /// Checkpoints the live coordinator triggered that have no outcome yet.
    pending: BTreeSet<u64>,
    /// Checkpoints left pending by JobMasters that died since the last window settled them.
    inherited: BTreeSet<u64>,
    /// A window ended RUNNING: the abort notices (subtask, checkpoint) its JobMaster owes
    /// in that instant (P3.4).
    owed: Option<Owed>,
}

struct Owed {
    at: Instant,
    index: u64,
    notices: BTreeSet<(SubtaskId, u64)>,
}

struct Window {
    opened: Instant,
    done: Vec<bool>,
    /// Per subtask: the reported (attempt, state) and who reported it.
    reports: Vec<Option<(u32, ExecutionState, u32)>>,
    /// `execution_state` events since the last other event: the states applied, if the
    /// window closes next.
    held: Vec<(SubtaskId, u32, ExecutionState)>,
    /// The last expected report arrived at this event: the window must close at once.
    complete_at: Option<u64>,
}

impl ReconcileOutcome {
    pub fn new(graph: &ExecutionGraph, task_managers: usize, timeout: Duration) -> Self {
        ReconcileOutcome {
            timeout,
            hosted: vec![false; task_managers],
            view: vec![None; graph.subtasks.len()],
            window: None,
            pending: BTreeSet::new(),
            inherited: BTreeSet::new(),
            owed: None,
        }
    }

    /// An RPC handed to the network (the send ledger).
    pub fn sent(&mut self, to: Address, rpc: Rpc) {
        match (to, rpc.call) {
            (Address::TaskManager(tm), Call::SubmitTask(_)) => self.hosted[tm as usize] = true,
            (Address::TaskManager(_), Call::NotifyCheckpointAborted(n)) => {
                if let Some(o) = self.owed.as_mut() {
                    o.notices.remove(&(rpc.subtask, n));
                }
            }
            _ => {}
        }
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        let overdue = self.overdue(graph, now);
        self.observe_event(graph, index, now, event).or(overdue)
    }

    fn observe_event(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        if let TraceEvent::ExecutionState {
            subtask,
            attempt,
            to,
            ..
        } = *event
        {
            match self.window.as_mut() {
                Some(w) => w.held.push((subtask, attempt, to)),
                None => self.view[subtask.index()] = Some((attempt, to)),
            }
            return None;
        }
        let violation = match *event {
            TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            } => self.ended(graph, now, (outcome, reported, missing)),
            _ => self.window_stays_open(now),
        };
        let violation = violation.map(|message| Violation {
            invariant: Invariant::ReconcileOutcome,
            time: now,
            actors: vec!["JobMaster".to_owned()],
            event_index: index,
            message,
        });
        match *event {
            TraceEvent::JobStatus {
                to: JobStatus::Reconciling,
                ..
            } => {
                self.window = Some(Window {
                    opened: now,
                    done: vec![false; self.hosted.len()],
                    reports: vec![None; self.view.len()],
                    held: Vec::new(),
                    complete_at: None,
                });
            }
            TraceEvent::JobMasterLost { .. } => {
                self.window = None;
                self.inherited.append(&mut self.pending);
            }
            TraceEvent::CheckpointTriggered { checkpoint } => {
                self.pending.insert(checkpoint);
            }
            TraceEvent::CheckpointAborted { checkpoint, .. } => {
                self.pending.remove(&checkpoint);
            }
            // A completion settles it and every older one (P1.7).
            TraceEvent::CheckpointCompleted { checkpoint } => {
                self.pending.retain(|&n| n > checkpoint);
            }
            TraceEvent::ReconcileEnded { outcome, .. } => {
                let inherited = std::mem::take(&mut self.inherited);
                // P3.4 RUNNING: the new coordinator first aborts what its predecessors left
                // pending, with every task it keeps. (FAILING restarts every task from the
                // latest completed checkpoint; FINISHED keeps none running.)
                if outcome == Outcome::Running {
                    let notices = (self.view.iter().enumerate())
                        .filter(|(_, v)| v.is_some_and(|(_, st)| !st.is_terminal()))
                        .flat_map(|(s, _)| inherited.iter().map(move |&n| (SubtaskId(s as u32), n)))
                        .collect();
                    self.owed = Some(Owed {
                        at: now,
                        index,
                        notices,
                    });
                }
            }
            TraceEvent::Rpc {
                from: Address::TaskManager(tm),
                to: Address::JobMaster,
                rpc,
                ..
            } => {
                if let Some(w) = self.window.as_mut() {
                    match rpc.call {
                        Call::ReportExecution { state, .. } => {
                            w.reports[rpc.subtask.index()] = Some((rpc.attempt, state, tm));
                        }
                        Call::ReportDone => {
                            w.done[tm as usize] = true;
                            let all = self.hosted.iter().zip(&w.done).all(|(&h, &d)| !h || d);
                            if all {
                                w.complete_at = Some(index);
                            }
                        }
                        _ => {}
                    }
                }
            }
            // P3.4: a TaskManager the heartbeat gave up on in the window missed it; what it
            // reported is void.
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                if let Some(w) = self.window.as_mut() {
                    w.done[task_manager as usize] = false;
                    w.complete_at = None;
                    for report in &mut w.reports {
                        if report.is_some_and(|(_, _, t)| t == task_manager) {
                            *report = None;
                        }
                    }
                }
            }
            _ => {}
        }
        violation
    }

    /// Any event but a state change while the window is open: the held-back state changes were
    /// not the end of the window; and a complete window must have closed already.
    fn window_stays_open(&mut self, now: Instant) -> Option<String> {
        let w = self.window.as_mut()?;
        for (s, attempt, to) in w.held.drain(..) {
            self.view[s.index()] = Some((attempt, to));
        }
        w.complete_at.take().map(|at| {
            format!(
                "every TaskManager the job used had sent its whole report (event {at}), but the \
                 reconcile window was still open at {now} (P3.4: it closes as soon as every \
                 expected report is in)"
            )
        })
    }

    fn ended(
        &mut self,
        graph: &ExecutionGraph,
        now: Instant,
        (outcome, reported, missing): (Outcome, u32, u32),
    ) -> Option<String> {
        let w = self.window.take()?;
        let name = |s: usize| graph.subtask_name(SubtaskId(s as u32)).to_string();
        let absent: Vec<String> = (0..w.done.len())
            .filter(|&t| self.hosted[t] && !w.done[t])
            .map(|t| format!("TaskManager{t}"))
            .collect();
        let applied = |s: usize| {
            w.held
                .iter()
                .rev()
                .find(|(h, _, _)| h.index() == s)
                .map(|&(_, a, st)| (a, st))
        };
        let result = (|| {
            if !absent.is_empty() && now < w.opened.saturating_add(self.timeout) {
                return Some(format!(
                    "the reconcile window closed before reconcile_timeout although {} had not \
                     sent its whole report (P3.4)",
                    absent.join(", ")
                ));
            }
            let mut failing = Vec::new();
            if !absent.is_empty() {
                failing.push(format!("{} missed the window", absent.join(", ")));
            }
            let mut all_finished = true;
            for s in 0..self.view.len() {
                // An execution the window settled before it closed is not decided again.
                if self.view[s].map(|(_, st)| st) != Some(ExecutionState::Reconciling) {
                    continue;
                }
                match w.reports[s] {
                    None => {
                        all_finished = false;
                        failing.push(format!("nobody reported {}", name(s)));
                    }
                    Some((attempt, state, _)) => {
                        if applied(s) != Some((attempt, state)) {
                            return Some(format!(
                                "{} was reported {state} as attempt {attempt}, but the \
                                 JobMaster holds {} when the window closes (P3.2: it rebuilds \
                                 the attempt, then applies the reported state)",
                                name(s),
                                applied(s).map_or("it RECONCILING".to_owned(), |(a, st)| {
                                    format!("{st} (attempt {a})")
                                })
                            ));
                        }
                        all_finished &= state == ExecutionState::Finished;
                        if matches!(state, ExecutionState::Failed | ExecutionState::Canceled) {
                            failing.push(format!("{} was reported {state}", name(s)));
                        }
                    }
                }
            }
            let want_reported = w.reports.iter().flatten().count() as u32;
            judge(
                outcome,
                (&failing, all_finished),
                (reported, missing),
                (want_reported, absent.len() as u32),
            )
        })();
        for &(s, attempt, to) in &w.held {
            self.view[s.index()] = Some((attempt, to));
        }
        result
    }

    /// Time moved on after a window ended RUNNING: every abort notice it owed must be sent.
    fn overdue(&mut self, graph: &ExecutionGraph, now: Instant) -> Option<Violation> {
        if self.owed.as_ref().is_some_and(|o| o.at < now) {
            self.settle_owed(graph)
        } else {
            None
        }
    }

    /// The abort notices owed since the window ended RUNNING are all due: the first still
    /// missing is a violation.
    fn settle_owed(&mut self, graph: &ExecutionGraph) -> Option<Violation> {
        let owed = self.owed.take()?;
        let &(subtask, checkpoint) = owed.notices.first()?;
        let name = graph.subtask_name(subtask).to_string();
        Some(Violation {
            invariant: Invariant::ReconcileOutcome,
            time: owed.at,
            actors: vec!["JobMaster".to_owned(), name.clone()],
            event_index: owed.index,
            message: format!(
                "the reconcile window ended RUNNING and kept {name}, but the JobMaster did not \
                 tell it that checkpoint {checkpoint}, left pending by the JobManager that died, \
                 is aborted ({} notices missing; P3.4)",
                owed.notices.len()
            ),
        })
    }

    /// The end of the run: a complete window left open with nothing after it, or abort
    /// notices still owed.
    pub fn finish(
        &mut self,
        graph: &ExecutionGraph,
        now: Instant,
        last_event: u64,
    ) -> Option<Violation> {
        match self.window_stays_open(now) {
            Some(message) => Some(Violation {
                invariant: Invariant::ReconcileOutcome,
                time: now,
                actors: vec!["JobMaster".to_owned()],
                event_index: last_event,
                message,
            }),
            None => self.settle_owed(graph),
        }
    }
}

#[cfg(test)]
mod tests {
    //! When the window closes, on the smallest job: `src[0]` → `sink[0]`, both on
    //! TaskManager0, a 50 ms `reconcile_timeout`, the window opened at 10 ms.

    use super::*;
    use crate::oracle::tests::source_to_sink;
    use crate::trace::Restore;
    use ExecutionState::{Reconciling, Running};

    const SRC: SubtaskId = SubtaskId(0);
    const SINK: SubtaskId = SubtaskId(1);
    /// P3.2: a TaskManager reports an attempt RUNNING (every vertex has parallelism 1).
    const RUNNING: Call = Call::ReportExecution {
        state: Running,
        parallelism: 1,
    };

    fn at(ms: u64) -> Instant {
        Instant::ZERO.saturating_add(Duration::from_millis(ms))
    }

    struct Feed {
        graph: ExecutionGraph,
        oracle: ReconcileOutcome,
        index: u64,
    }

    impl Feed {
        fn new() -> Feed {
            Feed::after(&[])
        }

        /// The window opens at 10 ms after `before` (at 5 ms).
        fn after(before: &[TraceEvent]) -> Feed {
            let graph = source_to_sink();
            let mut oracle = ReconcileOutcome::new(&graph, 1, Duration::from_millis(50));
            for s in [SRC, SINK] {
                let deploy = Rpc {
                    subtask: s,
                    attempt: 0,
                    call: Call::SubmitTask(Restore::FRESH),
                };
                oracle.sent(Address::TaskManager(0), deploy);
            }
            let mut feed = Feed {
                graph,
                oracle,
                index: 0,
            };
            for &event in before {
                assert_eq!(feed.event(5, event), None);
            }
            let open = TraceEvent::JobStatus {
                from: JobStatus::Created,
                to: JobStatus::Reconciling,
            };
            assert_eq!(feed.event(10, open), None);
            for s in [SRC, SINK] {
                assert_eq!(feed.state(10, s, Reconciling), None);
            }
            feed
        }

        fn event(&mut self, ms: u64, event: TraceEvent) -> Option<String> {
            self.index += 1;
            let graph = &self.graph;
            let v = self.oracle.observe(graph, self.index, at(ms), &event);
            v.map(|v| v.message)
        }

        fn state(&mut self, ms: u64, subtask: SubtaskId, to: ExecutionState) -> Option<String> {
            let event = TraceEvent::ExecutionState {
                subtask,
                attempt: 0,
                from: Reconciling,
                to,
            };
            self.event(ms, event)
        }

        fn report(&mut self, ms: u64, subtask: SubtaskId, call: Call) -> Option<String> {
            let rpc = Rpc {
                subtask,
                attempt: 0,
                call,
            };
            let event = TraceEvent::Rpc {
                from: Address::TaskManager(0),
                to: Address::JobMaster,
                sent_at: at(ms),
                rpc,
            };
            self.event(ms, event)
        }

        fn end(
            &mut self,
            ms: u64,
            outcome: Outcome,
            reported: u32,
            missing: u32,
        ) -> Option<String> {
            let event = TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            };
            self.event(ms, event)
        }

        fn both_reported_running(&mut self) {
            for s in [SRC, SINK] {
                assert_eq!(self.report(12, s, RUNNING), None);
            }
            assert_eq!(self.report(12, SRC, Call::ReportDone), None);
        }
    }

    #[test]
    fn the_window_closes_with_the_last_expected_report_and_applies_it() {
        let mut feed = Feed::new();
        feed.both_reported_running();
        assert_eq!(feed.state(12, SRC, Running), None);
        assert_eq!(feed.state(12, SINK, Running), None);
        assert_eq!(feed.end(12, Outcome::Running, 2, 0), None);
    }

    #[test]
    fn a_window_left_open_after_the_last_report_is_caught() {
        let mut feed = Feed::new();
        feed.both_reported_running();
        // Anything else recorded first: the window stayed open.
        let other = TraceEvent::TaskManagerTimedOut { task_manager: 0 };
        let wrong = feed.event(30, other).expect("caught");
        assert!(wrong.contains("still open"), "{wrong}");
        // Or nothing at all: the run ended with the window open.
        let mut feed = Feed::new();
        feed.both_reported_running();
        let wrong = feed.oracle.finish(&feed.graph, at(80), 9).expect("caught");
        assert!(wrong.message.contains("still open"), "{}", wrong.message);
    }

    #[test]
    fn a_window_closed_before_its_timeout_without_every_report_is_caught() {
        let mut feed = Feed::new();
        assert_eq!(feed.report(12, SRC, RUNNING), None);
        let wrong = feed.end(20, Outcome::Failing, 1, 1).expect("caught");
        assert!(wrong.contains("before reconcile_timeout"), "{wrong}");
        let mut feed = Feed::new();
        assert_eq!(feed.report(12, SRC, RUNNING), None);
        assert_eq!(feed.state(60, SRC, Running), None);
        assert_eq!(feed.end(60, Outcome::Failing, 1, 1), None);
        let mut feed = Feed::new();
        assert_eq!(feed.report(12, SRC, RUNNING), None);
        assert_eq!(feed.state(60, SRC, Running), None);
        let wrong = feed.end(60, Outcome::Running, 1, 1).expect("caught");
        assert!(wrong.contains("TaskManager0 missed the window"), "{wrong}");
    }

    /// Checkpoint 1 completed, 2 aborted, 3 and 4 pending, when the JobManager died.
    fn coordinator_died() -> Vec<TraceEvent> {
        let triggered = |checkpoint| TraceEvent::CheckpointTriggered { checkpoint };
        vec![
            triggered(1),
            triggered(2),
            TraceEvent::CheckpointCompleted { checkpoint: 1 },
            TraceEvent::CheckpointAborted {
                checkpoint: 2,
                reason: crate::trace::AbortReason::Expired,
            },
            triggered(3),
            triggered(4),
            TraceEvent::JobMasterLost { incarnation: 0 },
        ]
    }

    fn abort_notice(subtask: SubtaskId, checkpoint: u64) -> Rpc {
        Rpc {
            subtask,
            attempt: 0,
            call: Call::NotifyCheckpointAborted(checkpoint),
        }
    }

    /// The window kept src[0] running and sink[0] finished.
    fn kept_src_running(feed: &mut Feed) {
        assert_eq!(feed.report(12, SRC, RUNNING), None);
        let finished = Call::ReportExecution {
            state: ExecutionState::Finished,
            parallelism: 1,
        };
        assert_eq!(feed.report(12, SINK, finished), None);
        assert_eq!(feed.report(12, SRC, Call::ReportDone), None);
        assert_eq!(feed.state(12, SRC, Running), None);
        assert_eq!(feed.state(12, SINK, ExecutionState::Finished), None);
        assert_eq!(feed.end(12, Outcome::Running, 2, 0), None);
    }

    #[test]
    fn a_window_ending_running_owes_each_kept_task_the_inherited_aborts() {
        let later = TraceEvent::TaskManagerTimedOut { task_manager: 0 };
        // Both pending checkpoints told aborted to the running task, in the window's instant:
        // clean (the finished sink needs no notice; extra notices are allowed).
        let mut feed = Feed::after(&coordinator_died());
        kept_src_running(&mut feed);
        for n in [2, 3, 4] {
            feed.oracle
                .sent(Address::TaskManager(0), abort_notice(SRC, n));
        }
        assert_eq!(feed.event(20, later), None);
        // One of them sent to the finished sink instead: caught at the next instant...
        let mut feed = Feed::after(&coordinator_died());
        kept_src_running(&mut feed);
        feed.oracle
            .sent(Address::TaskManager(0), abort_notice(SRC, 3));
        feed.oracle
            .sent(Address::TaskManager(0), abort_notice(SINK, 4));
        let wrong = feed.event(20, later).expect("caught");
        assert!(wrong.contains("checkpoint 4"), "{wrong}");
        // ... or at the end of the run.
        let mut feed = Feed::after(&coordinator_died());
        kept_src_running(&mut feed);
        let wrong = feed.oracle.finish(&feed.graph, at(12), 9).expect("caught");
        assert!(
            wrong.message.contains("2 notices missing"),
            "{}",
            wrong.message
        );
        // A window with no JobManager death before it owes nothing.
        let mut feed = Feed::new();
        kept_src_running(&mut feed);
        assert_eq!(feed.event(20, later), None);
    }
}
