//! `reconcile-outcome`'s check of what a report says (P3.1, P3.2): a TaskManager reports to a
//! new JobMaster every execution it hosts, with the attempt and the state the task itself is
//! in, and every one that ended and left its slot within the terminal-state retention, and
//! nothing else.
//!
//! The ledger is the oracle's own: which attempt of each subtask a TaskManager took (the
//! `SubmitTask` RPCs delivered to it), the state that task itself is in and since when it ended
//! (its `task_state` events), and which processes died with what they hosted
//! (`task_manager_lost`). What the TaskManager sent is read from the send ledger, at the
//! instant it sent it: a report and its "done" leave together, in one instant, so the reports
//! a TaskManager sent since its last "done" are its whole report.

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::ExecutionState;
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::{Duration, Instant};

/// One attempt on a TaskManager, as the task itself knows it.
#[derive(Clone, Copy)]
struct Hosted {
    task_manager: u32,
    attempt: u32,
    state: ExecutionState,
    ended: Option<Instant>,
}

/// An entry of a report: subtask, attempt, state.
type Entry = (SubtaskId, u32, ExecutionState);

/// How a TaskManager's report was wrong.
enum Wrong {
    /// It left out an attempt it hosts, or one that ended (when) within the retention.
    Omitted(u32, Entry, Option<Instant>),
    /// It named an attempt, or a state, it neither hosts nor remembers.
    Named(u32, Entry),
}

pub struct Reports {
    retention: Duration,
    /// Per subtask: its attempt on a live TaskManager process, if it has one.
    hosted: Vec<Option<Hosted>>,
    /// Per TaskManager: the reports it sent since its last "done" (a report and its "done"
    /// leave in one instant, so these are the report under way).
    sending: Vec<Vec<Entry>>,
    /// A wrong report, found at a send (the send ledger knows no names), told at the next
    /// event.
    found: Option<Wrong>,
}

impl Reports {
    pub fn new(graph: &ExecutionGraph, task_managers: usize, retention: Duration) -> Self {
        Reports {
            retention,
            hosted: vec![None; graph.subtasks.len()],
            sending: vec![Vec::new(); task_managers],
            found: None,
        }
    }

    /// The send ledger: `rpc` leaves `from` for `to` at `now`.
    pub fn sent(&mut self, (from, to): (Address, Address), rpc: Rpc, now: Instant) {
        let (Address::TaskManager(tm), Address::JobMaster) = (from, to) else {
            return;
        };
        let tm_index = tm as usize;
        if tm_index >= self.sending.len() {
            return;
        }
        match rpc.call {
            Call::ReportExecution { state, .. } => {
                self.sending[tm_index].push((rpc.subtask, rpc.attempt, state));
            }
            Call::ReportDone => {
                if self.found.is_none() {
                    self.found = self.judge(tm, &self.sending[tm_index], now);
                }
                self.sending[tm_index].clear();
            }
            _ => {}
        }
    }

    /// The subtasks whose attempt on TaskManager `tm` finished, and when (P3.1: what the
    /// retention check of `finished-not-rerun` asks of a report).
    pub fn finished_on(&self, tm: u32) -> impl Iterator<Item = (SubtaskId, Instant)> + '_ {
        (self.hosted.iter().enumerate()).filter_map(move |(s, h)| {
            let h = h.filter(|h| h.task_manager == tm && h.state == ExecutionState::Finished)?;
            Some((SubtaskId(s as u32), h.ended?))
        })
    }

    /// P3.1, P3.2: what TaskManager `tm` must have reported at `now`, against what it did (in
    /// any order). The retention is read here as the oracle's own rule, not through the
    /// TaskManager's `forgotten`.
    fn judge(&self, tm: u32, sent: &[Entry], now: Instant) -> Option<Wrong> {
        let remembered = |h: &Hosted| {
            h.ended
                .is_none_or(|e| now.saturating_duration_since(e) <= self.retention)
        };
        let due: Vec<(Entry, Option<Instant>)> = (self.hosted.iter().enumerate())
            .filter_map(|(s, h)| {
                h.filter(|h| h.task_manager == tm && remembered(h))
                    .map(|h| ((SubtaskId(s as u32), h.attempt, h.state), h.ended))
            })
            .collect();
        if let Some(&(entry, ended)) = due.iter().find(|(e, _)| !sent.contains(e)) {
            return Some(Wrong::Omitted(tm, entry, ended));
        }
        let named = sent.iter().find(|e| !due.iter().any(|(d, _)| d == *e))?;
        Some(Wrong::Named(tm, *named))
    }

    fn describe(&self, graph: &ExecutionGraph, wrong: Wrong) -> String {
        let name = |s: SubtaskId| graph.subtask_name(s).to_string();
        match wrong {
            Wrong::Omitted(tm, (s, attempt, state), ended) => {
                let why = match ended {
                    Some(e) => format!(
                        "it ended there at {e}, within the terminal-state retention ({})",
                        self.retention
                    ),
                    None => "it runs there".to_owned(),
                };
                format!(
                    "TaskManager{tm}'s report to the new JobMaster does not name {} attempt \
                     {attempt} as {}: {why} (P3.1, P3.2)",
                    name(s),
                    state.name()
                )
            }
            Wrong::Named(tm, (s, attempt, state)) => format!(
                "TaskManager{tm}'s report to the new JobMaster names {} attempt {attempt} as \
                 {}, which it neither hosts in that state nor remembers within the \
                 terminal-state retention (P3.1, P3.2)",
                name(s),
                state.name()
            ),
        }
    }

    /// Follows `event`; returns a wrong report found since the last event.
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<String> {
        match *event {
            TraceEvent::Rpc {
                to: Address::TaskManager(tm),
                rpc:
                    Rpc {
                        subtask,
                        attempt,
                        call: Call::SubmitTask(_),
                    },
                ..
            } => {
                self.hosted[subtask.index()] = Some(Hosted {
                    task_manager: tm,
                    attempt,
                    state: ExecutionState::Created,
                    ended: None,
                });
            }
            TraceEvent::TaskState {
                subtask,
                attempt,
                to,
                ..
            } => {
                if let Some(h) = self.hosted[subtask.index()].as_mut() {
                    if h.attempt == attempt {
                        h.state = to;
                        if to.is_terminal() {
                            h.ended.get_or_insert(now);
                        }
                    }
                }
            }
            // What a process hosted and remembered dies with it.
            TraceEvent::TaskManagerLost { task_manager } => {
                for h in &mut self.hosted {
                    if h.is_some_and(|h| h.task_manager == task_manager) {
                        *h = None;
                    }
                }
            }
            _ => {}
        }
        let wrong = self.found.take()?;
        Some(self.describe(graph, wrong))
    }

    /// The end of the run: a wrong report sent in its last instant.
    pub fn finish(&mut self, graph: &ExecutionGraph) -> Option<String> {
        let wrong = self.found.take()?;
        Some(self.describe(graph, wrong))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Restore;

    const MS: u64 = 1_000_000;
    const TM: Address = Address::TaskManager(0);
    const SRC: SubtaskId = SubtaskId(0);

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    fn graph() -> ExecutionGraph {
        crate::oracle::tests::source_to_sink()
    }

    /// SRC attempt 1 deployed on TaskManager 0 at 1 ms, failed at 5 ms; retention 10 ms.
    fn failed_src() -> Reports {
        let g = graph();
        let mut r = Reports::new(&g, 2, Duration::from_nanos(10 * MS));
        let submit = TraceEvent::Rpc {
            from: Address::JobMaster,
            to: TM,
            sent_at: at(0),
            rpc: Rpc {
                subtask: SRC,
                attempt: 1,
                call: Call::SubmitTask(Restore::FRESH),
            },
        };
        assert_eq!(r.observe(&g, at(1), &submit), None);
        for (ms, to) in [
            (1, ExecutionState::Deploying),
            (2, ExecutionState::Running),
            (5, ExecutionState::Failed),
        ] {
            let state = TraceEvent::TaskState {
                subtask: SRC,
                attempt: 1,
                from: ExecutionState::Created,
                to,
            };
            assert_eq!(r.observe(&g, at(ms), &state), None);
        }
        r
    }

    fn report(r: &mut Reports, ms: u64, entries: &[(u32, ExecutionState)]) -> Option<String> {
        let g = graph();
        for &(attempt, state) in entries {
            let call = Call::ReportExecution {
                state,
                parallelism: 1,
            };
            let rpc = Rpc {
                subtask: SRC,
                attempt,
                call,
            };
            r.sent((TM, Address::JobMaster), rpc, at(ms));
        }
        let done = Rpc::of_task_manager(Call::ReportDone);
        r.sent((TM, Address::JobMaster), done, at(ms));
        r.observe(&g, at(ms), &TraceEvent::JobResultWritten)
    }

    #[test]
    fn an_ended_task_is_reported_within_the_retention_and_not_after() {
        let failed = [(1, ExecutionState::Failed)];
        assert_eq!(
            report(&mut failed_src(), 15, &failed),
            None,
            "the last instant"
        );
        assert_eq!(report(&mut failed_src(), 16, &[]), None, "forgotten");
        let omitted = report(&mut failed_src(), 15, &[]).expect("omitted");
        assert!(omitted.contains("does not name"), "{omitted}");
        let stale = report(&mut failed_src(), 16, &failed).expect("remembered too long");
        assert!(stale.contains("names"), "{stale}");
    }

    #[test]
    fn a_report_names_the_attempt_and_state_the_task_is_in() {
        let wrong_state = report(&mut failed_src(), 6, &[(1, ExecutionState::Running)]);
        assert!(wrong_state.is_some());
        let wrong_attempt = report(&mut failed_src(), 6, &[(0, ExecutionState::Failed)]);
        assert!(wrong_attempt.is_some());
    }

    #[test]
    fn a_wrong_report_in_the_last_instant_is_told_at_the_end() {
        let mut r = failed_src();
        let done = Rpc::of_task_manager(Call::ReportDone);
        r.sent((TM, Address::JobMaster), done, at(6));
        let told = r
            .finish(&graph())
            .expect("the report left out the failed task");
        assert!(told.contains("src[0] attempt 1"), "{told}");
        assert_eq!(r.finish(&graph()), None, "told once");
    }

    #[test]
    fn a_dead_process_remembers_nothing() {
        let mut r = failed_src();
        let lost = TraceEvent::TaskManagerLost { task_manager: 0 };
        assert_eq!(r.observe(&graph(), at(6), &lost), None);
        assert_eq!(report(&mut r, 7, &[]), None);
        let mut r = failed_src();
        assert_eq!(r.observe(&graph(), at(6), &lost), None);
        assert!(report(&mut r, 7, &[(1, ExecutionState::Failed)]).is_some());
    }
}
