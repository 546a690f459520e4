//! `reconcile-outcome` for batch jobs (P3.2, P3.4): a reconcile window closes as soon as every
//! expected TaskManager has sent its whole report (and not before `reconcile_timeout`
//! otherwise), and the outcome, the counts and the states applied are what the reports that
//! reached the new JobMaster call for.
//!
//! The ledger is the oracle's own: which TaskManager processes durable HA storage names (every
//! registration that reached a JobMaster, minus those a JobMaster gave up on), and what reached
//! the reconciling JobMaster: registrations, executions with state and parallelism, the splits
//! and producer attempts each execution read, partitions, and "report done". From it the oracle
//! decides the outcome with the rules of P3.4 and the choices `docs/rules.md` records for batch
//! jobs, and compares it with the JobMaster's `ReconcileEnded` and the execution states it
//! applied just before.

use super::super::events::{JobEvent, Location};
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::oracle::reconcile_outcome::judge;
use crate::scenario::{Batch, ShuffleKind};
use crate::status::ExecutionState;
use crate::trace::{ReconcileOutcome, TraceEvent};
use sim::{Duration, Instant};
use std::collections::BTreeSet;

/// What reached the JobMaster from a TaskManager: the facts this oracle keeps.
#[derive(Clone, Copy, Debug)]
pub enum Received {
    /// The TaskManager registered (after the JobMaster dropped any older process of it).
    Register,
    Execution {
        subtask: SubtaskId,
        attempt: u32,
        state: ExecutionState,
        parallelism: u32,
    },
    Split {
        subtask: SubtaskId,
        attempt: u32,
        split: u32,
    },
    Input {
        subtask: SubtaskId,
        attempt: u32,
        producer: SubtaskId,
        producer_attempt: u32,
    },
    Partition {
        subtask: SubtaskId,
        attempt: u32,
    },
    Done,
}

/// The ledger across JobMasters.
pub(super) struct Ledger {
    /// `jobmaster.reconcile_timeout`.
    timeout: Duration,
    /// Per TaskManager: the process HA storage expects to report (P3.1).
    expected: Vec<Option<u32>>,
    /// Per TaskManager: the process registered with the current JobMaster.
    registered: Vec<Option<u32>>,
    /// Per subtask: the JobMaster's view (attempt, state), from its `ExecutionState` events.
    view: Vec<Option<(u32, ExecutionState)>>,
    window: Option<Window>,
    /// After a window that ended RUNNING: the reported partitions the JobMaster must not keep
    /// (not the partition of a finished execution it adopted), to be released (P3.2).
    pub(super) unadopted: Vec<(SubtaskId, u32, u32)>,
}

/// One reconcile window, as the oracle saw it.
struct Window {
    opened: Instant,
    /// Every expected TaskManager finished its report: the window must close at once.
    complete: bool,
    /// The instant it became complete after it opened: it must close in that instant, before
    /// the JobMaster takes anything else (a registration that would make it wait again, a
    /// later event), whatever trace events come between.
    completed_at: Option<Instant>,
    expected: Vec<Option<u32>>,
    done: Vec<bool>,
    /// Per vertex: the parallelism known from durable job events or from a report.
    known: Vec<Option<u32>>,
    /// Per subtask: the latest report (attempt, state, TaskManager).
    reports: Vec<Option<(u32, ExecutionState, u32)>>,
    splits: Vec<Vec<u32>>,
    inputs: Vec<Vec<(SubtaskId, u32)>>,
    /// Per subtask: reported partitions (attempt, where).
    partitions: Vec<Vec<(u32, Location)>>,
    /// Why no consistent view can exist, once found (sticky, as the JobMaster's).
    conflict: Option<String>,
}

impl Window {
    fn check_complete(&mut self) {
        self.complete = self
            .expected
            .iter()
            .zip(&self.done)
            .all(|(e, &d)| e.is_none() || d);
    }

    /// Whatever TaskManager `tm` reported is void: the JobMaster gave up on it (its process
    /// is gone, or cut off past the heartbeat timeout).
    fn forget(&mut self, tm: u32) {
        self.expected[tm as usize] = None;
        self.done[tm as usize] = false;
        for s in 0..self.reports.len() {
            if self.reports[s].is_some_and(|(_, _, t)| t == tm) {
                self.reports[s] = None;
                self.splits[s].clear();
                self.inputs[s].clear();
            }
        }
        // Its partitions too (P2.3: the JobMaster stops tracking what a lost TaskManager
        // holds): the window neither adopts them nor owes them a release, which could not
        // reach that TaskManager. It reports them again if it registers again.
        for reported in &mut self.partitions {
            reported.retain(|&(_, at)| {
                !matches!(at, Location::TaskManager { task_manager, .. } if task_manager == tm)
            });
        }
    }
}

impl Ledger {
    pub(super) fn new(graph: &ExecutionGraph, task_managers: usize, timeout: Duration) -> Ledger {
        Ledger {
            timeout,
            // Every TaskManager starts as process 0 and the first JobMaster uses them all.
            expected: vec![Some(0); task_managers],
            registered: vec![Some(0); task_managers],
            view: vec![None; graph.subtasks.len()],
            window: None,
            unadopted: Vec::new(),
        }
    }

    /// A new JobMaster took over (or the old one died): nothing is registered with it.
    pub(super) fn leader_changed(&mut self) {
        self.registered.fill(None);
        self.window = None;
    }

    /// The window opens: the vertices the durable job events initialized are known.
    pub(super) fn open(&mut self, graph: &ExecutionGraph, durable: &[JobEvent], now: Instant) {
        let mut known = vec![None; graph.vertices.len()];
        for e in durable {
            if let JobEvent::VertexInitialized {
                vertex,
                parallelism,
            } = e
            {
                known[vertex.index()] = Some(*parallelism);
            }
        }
        let n = graph.subtasks.len();
        let mut window = Window {
            opened: now,
            complete: false,
            expected: self.expected.clone(),
            done: vec![false; self.expected.len()],
            known,
            reports: vec![None; n],
            splits: vec![Vec::new(); n],
            inputs: vec![Vec::new(); n],
            partitions: vec![Vec::new(); n],
            conflict: None,
            completed_at: None,
        };
        window.check_complete();
        self.window = Some(window);
    }

    /// Any trace event while the window is open: once complete, the JobMaster applies the
    /// states (`execution_state`) and ends the window (`reconcile_ended`) before anything else.
    /// A window can be complete as it opens (every TaskManager the job used was given up on
    /// before the crash); the new JobMaster's opening step tells the TaskManagers of it (P3.1,
    /// they register) before it checks its window, so their `leader_lost` and `leader_found`
    /// of that step come first, and so does the `rpc_lost` of a registration lost and retried.
    pub(super) fn between(&mut self, event: &TraceEvent, now: Instant) -> Option<String> {
        let w = self.window.as_mut()?;
        // Complete at an earlier instant, or complete and then made to wait again.
        let late = w.completed_at.is_some_and(|at| now > at || !w.complete);
        let opening = w.opened == now
            && matches!(
                event,
                TraceEvent::LeaderLost { .. }
                    | TraceEvent::LeaderFound { .. }
                    | TraceEvent::RpcLost { .. }
            );
        let allowed = opening
            || matches!(
                event,
                TraceEvent::ExecutionState { .. } | TraceEvent::ReconcileEnded { .. }
            );
        if !late && (!w.complete || allowed) {
            return None;
        }
        let since = w.completed_at.take().unwrap_or(now);
        w.complete = false;
        Some(format!(
            "every TaskManager the window waits for had sent its whole report (or been given \
             up on) at {since}, but the reconcile window did not close then (still open at \
             {now}; P3.4: it closes as soon as every expected report is in, before the \
             JobMaster takes anything else)"
        ))
    }

    /// After what the JobMaster took at `now` (a report, a TaskManager given up on): if that
    /// completed the window, it completed it now. Not in the instant the window opened: the
    /// new JobMaster's opening step lets the TaskManagers register before it checks its
    /// window (see `between`), so a window complete as it opens may wait again at once.
    pub(super) fn note_complete(&mut self, now: Instant) {
        if let Some(w) = self
            .window
            .as_mut()
            .filter(|w| w.complete && now > w.opened)
        {
            w.completed_at.get_or_insert(now);
        }
    }

    /// Per vertex, the parallelism the open window knows (from the durable job events, else
    /// from a reported execution): the rebuilt view's, if the window ends RUNNING or FINISHED.
    pub(super) fn known(&self) -> Option<Vec<Option<u32>>> {
        self.window.as_ref().map(|w| w.known.clone())
    }

    /// The partitions reported in the open window: (subtask, attempt, where).
    pub(super) fn reported_partitions(&self) -> Vec<(SubtaskId, u32, Location)> {
        let Some(w) = &self.window else {
            return Vec::new();
        };
        w.partitions
            .iter()
            .enumerate()
            .flat_map(|(s, reported)| {
                reported
                    .iter()
                    .map(move |&(attempt, location)| (SubtaskId(s as u32), attempt, location))
            })
            .collect()
    }

    /// What the JobMaster holds for `s` (attempt, state), from its `execution_state` events.
    pub(super) fn holds(&self, s: SubtaskId) -> Option<(u32, ExecutionState)> {
        self.view[s.index()]
    }

    pub(super) fn execution_state(&mut self, s: SubtaskId, attempt: u32, to: ExecutionState) {
        self.view[s.index()] = Some((attempt, to));
    }

    /// The JobMaster gave up on TaskManager `tm` (heartbeat timeout, or a newer process
    /// registered): HA storage no longer expects the process it had registered or, if none
    /// registered with this JobMaster, the one it expected (a process that died before it
    /// could register with the new JobMaster is timed out all the same, and a window stops
    /// waiting for it, P3.4).
    pub(super) fn timed_out(&mut self, tm: u32) {
        let Some(process) = self.registered[tm as usize]
            .take()
            .or(self.expected[tm as usize])
        else {
            return;
        };
        if self.expected[tm as usize] == Some(process) {
            self.expected[tm as usize] = None;
        }
        if let Some(w) = self.window.as_mut() {
            if w.expected[tm as usize] == Some(process) {
                w.forget(tm);
                w.check_complete();
            }
        }
    }

    pub(super) fn received(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        what: Received,
    ) {
        if let Received::Register = what {
            self.registered[tm as usize] = Some(process);
            self.expected[tm as usize] = Some(process);
        }
        let Some(w) = self.window.as_mut() else {
            return;
        };
        match what {
            Received::Register => {
                if w.expected[tm as usize] != Some(process) {
                    w.forget(tm);
                    w.expected[tm as usize] = Some(process);
                }
                w.done[tm as usize] = false;
                w.complete = false;
            }
            Received::Execution {
                subtask,
                attempt,
                state,
                parallelism,
            } => {
                let s = subtask.index();
                if let Some((a, _, t)) = w.reports[s] {
                    if (a, t) != (attempt, tm) && w.conflict.is_none() {
                        w.conflict = Some(format!(
                            "{} was reported as attempt {a} on TaskManager{t} and as attempt \
                             {attempt} on TaskManager{tm}",
                            graph.subtask_name(subtask)
                        ));
                    }
                }
                w.reports[s] = Some((attempt, state, tm));
                w.splits[s].clear();
                w.inputs[s].clear();
                let v = graph.subtasks[s].vertex.index();
                w.known[v].get_or_insert(parallelism);
            }
            Received::Split {
                subtask,
                attempt,
                split,
            } => {
                let s = subtask.index();
                if w.reports[s].is_some_and(|(a, _, _)| a == attempt) {
                    let vertex = &graph.vertices[graph.subtasks[s].vertex.index()];
                    let first = vertex.first as usize;
                    let readers = first..first + vertex.parallelism as usize;
                    if w.splits[readers].iter().any(|held| held.contains(&split))
                        && w.conflict.is_none()
                    {
                        w.conflict = Some(format!(
                            "split {split} of {} was reported by two readers",
                            vertex.name
                        ));
                    }
                    w.splits[s].push(split);
                }
            }
            Received::Input {
                subtask,
                attempt,
                producer,
                producer_attempt,
            } => {
                let s = subtask.index();
                if w.reports[s].is_some_and(|(a, _, _)| a == attempt) {
                    w.inputs[s].push((producer, producer_attempt));
                }
            }
            Received::Partition { subtask, attempt } => {
                w.partitions[subtask.index()].push((
                    attempt,
                    Location::TaskManager {
                        task_manager: tm,
                        process,
                    },
                ));
            }
            Received::Done => {
                if w.expected[tm as usize] == Some(process) {
                    w.done[tm as usize] = true;
                    w.check_complete();
                }
            }
        }
    }

    /// The JobMaster ended the window with `outcome` and these counts: is that what the
    /// reports call for, and did it apply the reported states? `remote` holds the partitions
    /// the remote shuffle service has.
    pub(super) fn ended(
        &mut self,
        graph: &ExecutionGraph,
        batch: &Batch,
        remote: &BTreeSet<(SubtaskId, u32)>,
        (outcome, reported, missing): (ReconcileOutcome, u32, u32),
        now: Instant,
    ) -> Option<String> {
        let w = self.window.take()?;
        let name = |s: SubtaskId| graph.subtask_name(s).to_string();
        let mut failing: Vec<String> = Vec::new();
        let absent: Vec<String> = (0..w.expected.len())
            .filter(|&t| w.expected[t].is_some() && !w.done[t])
            .map(|t| format!("TaskManager{t}"))
            .collect();
        if !absent.is_empty() && now < w.opened.saturating_add(self.timeout) {
            return Some(format!(
                "the reconcile window closed before reconcile_timeout although {} had not sent \
                 its whole report (P3.4)",
                absent.join(", ")
            ));
        }
        if !absent.is_empty() {
            failing.push(format!("{} did not finish its report", absent.join(", ")));
        }
        failing.extend(w.conflict.clone());
        for (s, inputs) in w.inputs.iter().enumerate() {
            for &(p, a) in inputs {
                if let Some((reported, _, _)) = w.reports[p.index()] {
                    if reported != a {
                        failing.push(format!(
                            "{} read attempt {a} of {}, which reported attempt {reported}",
                            name(SubtaskId(s as u32)),
                            name(p)
                        ));
                    }
                }
            }
        }
        let mut all_finished = true;
        // Per subtask: the (attempt, state) the JobMaster must now hold.
        let mut applied: Vec<(SubtaskId, u32, ExecutionState)> = Vec::new();
        let mut rerun: Vec<SubtaskId> = Vec::new();
        for (v, vertex) in graph.vertices.iter().enumerate() {
            let Some(p) = w.known[v] else {
                all_finished = false;
                continue;
            };
            if let Some(&e) = vertex
                .inputs
                .iter()
                .find(|&&e| w.known[graph.edges[e].from.index()].is_none())
            {
                let from = &graph.vertices[graph.edges[e].from.index()].name;
                failing.push(format!(
                    "{} is known but its input {from} is not",
                    vertex.name
                ));
            }
            let consumed = vertex
                .outputs
                .iter()
                .any(|&e| w.known[graph.edges[e].to.index()].is_some());
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let Some((attempt, state, _)) = w.reports[s.index()] else {
                    all_finished = false;
                    if consumed {
                        failing.push(format!(
                            "nobody reported {}, whose output its consumers read",
                            name(s)
                        ));
                    } else {
                        rerun.push(s);
                    }
                    continue;
                };
                applied.push((s, attempt, state));
                match state {
                    ExecutionState::Finished => {
                        let kept = match batch.shuffle {
                            ShuffleKind::Remote => remote.contains(&(s, attempt)),
                            ShuffleKind::Internal => {
                                w.partitions[s.index()].iter().any(|&(a, _)| a == attempt)
                            }
                        };
                        if !kept && !vertex.outputs.is_empty() {
                            failing.push(format!(
                                "{} finished but its partition was not reported",
                                name(s)
                            ));
                        }
                    }
                    ExecutionState::Failed | ExecutionState::Canceled => {
                        all_finished = false;
                        failing.push(format!("{} was reported {state}", name(s)));
                    }
                    _ => all_finished = false,
                }
            }
        }
        let want_reported = w.reports.iter().flatten().count() as u32;
        let counts = (want_reported, absent.len() as u32);
        let judged = (&failing[..], all_finished);
        if let Some(wrong) = judge(outcome, judged, (reported, missing), counts) {
            return Some(wrong);
        }
        // P3.2: the reported states are applied, to the reported attempts; an execution
        // nobody reported and nobody read from runs again (its old attempt is CANCELED).
        for (s, attempt, state) in applied {
            if self.view[s.index()] != Some((attempt, state)) {
                return Some(format!(
                    "{} was reported {state} as attempt {attempt}, but the JobMaster holds {} \
                     at the end of the window (P3.2: the reported state is applied to the \
                     reported attempt)",
                    name(s),
                    self.view[s.index()].map_or("nothing".to_owned(), |(a, st)| format!(
                        "{st} (attempt {a})"
                    ))
                ));
            }
        }
        if failing.is_empty() && !all_finished {
            for (s, reported) in w.partitions.iter().enumerate() {
                let adopted = match w.reports[s] {
                    Some((attempt, ExecutionState::Finished, _)) => Some(attempt),
                    _ => None,
                };
                for &(attempt, location) in reported {
                    if let Location::TaskManager { task_manager, .. } = location {
                        if adopted != Some(attempt) {
                            let s = SubtaskId(s as u32);
                            self.unadopted.push((s, attempt, task_manager));
                        }
                    }
                }
            }
        }
        if failing.is_empty() {
            for s in rerun {
                if self.view[s.index()].map(|(_, st)| st) != Some(ExecutionState::Canceled) {
                    return Some(format!(
                        "nobody reported {} and nobody read its output, so its execution must \
                         be CANCELED and run again, but the JobMaster holds {} (P3.4)",
                        name(s),
                        self.view[s.index()].map_or("nothing".to_owned(), |(a, st)| format!(
                            "{st} (attempt {a})"
                        ))
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    //! Each P3.4 rule on its own, fed to the ledger of a two-vertex batch job `src` (2
    //! subtasks) → `sink` (1) on two TaskManagers, as the world would tell it.

    use super::*;
    use ExecutionState::{Failed, Finished, Reconciling, Running};

    fn job() -> (ExecutionGraph, Batch) {
        let text = r#"{"name": "t", "mode": "batch",
            "job": {"vertices": [
                {"id": "src", "operator": "source", "parallelism": 2, "records": 4},
                {"id": "sink", "operator": "sink", "parallelism": 1}],
              "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]},
            "cluster": {"task_managers": 2, "slots_per_task_manager": 2},
            "batch": {"coordinators": {"src": {"splits": 4}}},
            "jobmaster": {"failover": "reconcile"}}"#;
        let scenario = crate::scenario::parse(text, "t").expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        (graph, scenario.batch.expect("a batch job"))
    }

    const SRC0: SubtaskId = SubtaskId(0);
    const SRC1: SubtaskId = SubtaskId(1);
    const SINK: SubtaskId = SubtaskId(2);

    /// A window opened by a new JobMaster that knows no vertex yet, with both TaskManagers
    /// (process 0) registered again.
    fn window(graph: &ExecutionGraph) -> Ledger {
        let mut ledger = Ledger::new(graph, 2, Duration::from_millis(50));
        ledger.leader_changed();
        ledger.open(graph, &[], Instant::ZERO);
        for tm in 0..2 {
            ledger.received(graph, (tm, 0), Received::Register);
        }
        ledger
    }

    fn report(
        ledger: &mut Ledger,
        graph: &ExecutionGraph,
        tm: u32,
        s: SubtaskId,
        state: ExecutionState,
    ) {
        let parallelism = if s == SINK { 1 } else { 2 };
        let execution = Received::Execution {
            subtask: s,
            attempt: 0,
            state,
            parallelism,
        };
        ledger.received(graph, (tm, 0), execution);
        // The JobMaster's view, as its `execution_state` events would say.
        ledger.execution_state(s, 0, Reconciling);
        ledger.execution_state(s, 0, state);
    }

    fn done(ledger: &mut Ledger, graph: &ExecutionGraph, tm: u32) {
        ledger.received(graph, (tm, 0), Received::Done);
    }

    fn partition(ledger: &mut Ledger, graph: &ExecutionGraph, tm: u32, s: SubtaskId) {
        let what = Received::Partition {
            subtask: s,
            attempt: 0,
        };
        ledger.received(graph, (tm, 0), what);
    }

    fn end(
        ledger: &mut Ledger,
        outcome: ReconcileOutcome,
        reported: u32,
        missing: u32,
    ) -> Option<String> {
        let (graph, batch) = job();
        // After the 50 ms reconcile_timeout: a window that misses a TaskManager may close.
        let after_timeout = Instant::ZERO.saturating_add(Duration::from_millis(60));
        ledger.ended(
            &graph,
            &batch,
            &BTreeSet::new(),
            (outcome, reported, missing),
            after_timeout,
        )
    }

    /// Both sources finished with their partitions reported, the sink running.
    fn all_reported(graph: &ExecutionGraph) -> Ledger {
        let mut ledger = window(graph);
        report(&mut ledger, graph, 0, SRC0, Finished);
        partition(&mut ledger, graph, 0, SRC0);
        report(&mut ledger, graph, 1, SRC1, Finished);
        partition(&mut ledger, graph, 1, SRC1);
        report(&mut ledger, graph, 1, SINK, Running);
        ledger
    }

    #[test]
    fn a_complete_report_ends_running_and_a_missing_report_done_ends_failing() {
        let (graph, _) = job();
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        assert_eq!(end(&mut ledger, ReconcileOutcome::Running, 3, 0), None);

        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 3, 0).expect("caught");
        assert!(
            wrong.contains("TaskManager1 did not finish its report"),
            "{wrong}"
        );
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        assert_eq!(end(&mut ledger, ReconcileOutcome::Failing, 3, 1), None);
    }

    #[test]
    fn a_failed_report_a_lost_partition_or_a_split_read_twice_ends_failing() {
        let (graph, _) = job();
        let mut ledger = window(&graph);
        report(&mut ledger, &graph, 0, SRC0, Failed);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 1, 2).expect("caught");
        assert!(wrong.contains("reported FAILED"), "{wrong}");

        // src[1] finished, but nobody reported its partition, which the running sink reads.
        let mut ledger = window(&graph);
        report(&mut ledger, &graph, 0, SRC0, Finished);
        partition(&mut ledger, &graph, 0, SRC0);
        report(&mut ledger, &graph, 1, SRC1, Finished);
        report(&mut ledger, &graph, 1, SINK, Running);
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 3, 0).expect("caught");
        assert!(
            wrong.contains("src[1] finished but its partition"),
            "{wrong}"
        );

        let mut ledger = window(&graph);
        report(&mut ledger, &graph, 0, SRC0, Running);
        report(&mut ledger, &graph, 1, SRC1, Running);
        for (tm, s) in [(0, SRC0), (1, SRC1)] {
            let split = Received::Split {
                subtask: s,
                attempt: 0,
                split: 3,
            };
            ledger.received(&graph, (tm, 0), split);
        }
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 2, 0).expect("caught");
        assert!(
            wrong.contains("split 3 of src was reported by two readers"),
            "{wrong}"
        );
    }

    #[test]
    fn the_counts_and_the_applied_states_are_those_reported() {
        let (graph, _) = job();
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 2, 0).expect("caught");
        assert!(wrong.contains("3 executions were reported"), "{wrong}");

        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        // The JobMaster adopts another attempt than the one reported.
        ledger.execution_state(SINK, 1, Running);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 3, 0).expect("caught");
        assert!(
            wrong.contains("sink[0] was reported RUNNING as attempt 0"),
            "{wrong}"
        );
    }

    #[test]
    fn a_taskmanager_the_jobmaster_gave_up_on_is_neither_awaited_nor_counted() {
        let (graph, _) = job();
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        ledger.timed_out(1);
        // TaskManager1's reports are void: src[1] is unreported although the sink's vertex,
        // which reads it, is known, so nobody can account for its output: FAILING, with one
        // execution reported and no TaskManager awaited.
        assert_eq!(end(&mut ledger, ReconcileOutcome::Failing, 1, 0), None);
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        ledger.timed_out(1);
        let wrong = end(&mut ledger, ReconcileOutcome::Running, 1, 0).expect("caught");
        assert!(wrong.contains("nobody reported src[1]"), "{wrong}");
    }

    /// P3.4: the window closes as soon as the last expected report is in, and, short of that,
    /// not before `reconcile_timeout`.
    #[test]
    fn the_window_closes_with_the_last_report_and_not_before_its_timeout() {
        let (graph, batch) = job();
        let at = |ms| Instant::ZERO.saturating_add(Duration::from_millis(ms));
        let other = TraceEvent::TaskManagerLost { task_manager: 0 };
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        assert_eq!(
            ledger.between(&other, at(5)),
            None,
            "TaskManager1 is still awaited"
        );
        done(&mut ledger, &graph, 1);
        let state = TraceEvent::ExecutionState {
            subtask: SINK,
            attempt: 0,
            from: Reconciling,
            to: Running,
        };
        assert_eq!(
            ledger.between(&state, at(5)),
            None,
            "the states applied first"
        );
        let wrong = ledger.between(&other, at(5)).expect("caught");
        assert!(wrong.contains("still open"), "{wrong}");
        // Complete as it opens: the TaskManagers told of the new JobMaster in its opening step
        // come first, and nothing else.
        let found = TraceEvent::LeaderFound { task_manager: 0 };
        let mut ledger = Ledger::new(&graph, 2, Duration::from_millis(50));
        ledger.timed_out(0);
        ledger.timed_out(1);
        ledger.leader_changed();
        ledger.open(&graph, &[], at(7));
        assert_eq!(ledger.between(&found, at(7)), None, "the opening step");
        assert!(ledger.between(&found, at(8)).is_some(), "a later step");

        // Complete at 5 ms: closing at a later instant is late even if only the states and
        // the end come between.
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        done(&mut ledger, &graph, 1);
        ledger.note_complete(at(5));
        assert!(ledger.between(&state, at(6)).is_some(), "a later instant");
        // Complete when TaskManager1 is given up on, then made to wait again by its new
        // process's registration in the same instant: the JobMaster took something else
        // instead of closing.
        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        ledger.timed_out(1);
        ledger.note_complete(at(5));
        ledger.received(&graph, (1, 1), Received::Register);
        ledger.note_complete(at(5));
        let wrong = ledger.between(&state, at(5)).expect("caught");
        assert!(wrong.contains("did not close then"), "{wrong}");

        let mut ledger = all_reported(&graph);
        done(&mut ledger, &graph, 0);
        let early = (ReconcileOutcome::Failing, 3, 1);
        let remote = BTreeSet::new();
        let wrong = ledger
            .ended(&graph, &batch, &remote, early, at(20))
            .expect("caught");
        assert!(wrong.contains("before reconcile_timeout"), "{wrong}");
    }
}
