//! The reconcile window (P3.1, P3.2, P3.4), one for both kinds of job: which TaskManagers a
//! newly elected JobMaster waits for, which have reported in full, the window's entry in the
//! reconciliation statistics, and how it ends.
//!
//! The JobMaster holds the one [`Window`] whatever its mode (`JobMaster::window`). What each
//! mode's scheduler takes from the reports differs (a streaming one the state of each
//! execution; a batch one also partitions, splits and inputs, and it checks them against each
//! other), so each keeps its reports itself and judges them ([`Judged`]); the window turns that
//! judgement into the outcome of P3.4's table, the `reconcile-ended` trace event and the
//! statistics, the same way for both.

use crate::checkpoint::stats::ReconcileRecord;
use crate::trace::{ReconcileOutcome, TraceEvent};
use sim::Instant;

/// An open reconcile window.
pub(crate) struct Window {
    /// When the JobMaster opened it (at its election).
    pub(crate) started: Instant,
    /// Per TaskManager: the process whose whole report the window waits for (P3.1: one that
    /// hosted the job), if any. A report of another process of that TaskManager does not
    /// count: that process is another TaskManager to the job.
    expected: Vec<Option<u32>>,
    /// Per TaskManager: its expected process said its report is complete (P3.2).
    done: Vec<bool>,
    /// Its entry in the reconciliation statistics.
    pub(crate) record: usize,
}

/// What the JobMaster concluded from the reports when the window closed (P3.4).
pub(crate) struct Judged {
    /// Some execution is unaccounted for, FAILED or CANCELED, or the reports contradict
    /// each other; a TaskManager missing the window is added by [`Window::end`].
    pub(crate) failing: bool,
    /// Every execution was reported FINISHED.
    pub(crate) all_finished: bool,
    /// Whether a TaskManager that missed the window makes it FAILING (the injected bug
    /// `reconcile-ignores-missing-tm` says no).
    pub(crate) missing_counts: bool,
    /// Executions reported, kept RUNNING (or on their way there), kept FINISHED.
    pub(crate) reported: u32,
    pub(crate) running: u32,
    pub(crate) finished: u32,
}

impl Window {
    /// P3.1: the window opens at `now` and waits for the whole report of every TaskManager
    /// process in `expected`; its statistics entry is added to `stats`.
    pub(crate) fn open(
        now: Instant,
        expected: Vec<Option<u32>>,
        stats: &mut Vec<ReconcileRecord>,
    ) -> Window {
        let record = stats.len();
        stats.push(ReconcileRecord {
            started: now,
            ended: None,
            outcome: None,
            reports: 0,
            late_reports: 0,
            kept_running: 0,
            kept_finished: 0,
        });
        Window {
            started: now,
            done: vec![false; expected.len()],
            expected,
            record,
        }
    }

    /// The process of TaskManager `tm` the window waits for, if any (what staged tests ask).
    #[cfg(test)]
    pub(crate) fn expected(&self, tm: u32) -> Option<u32> {
        self.expected[tm as usize]
    }

    /// TaskManager `tm`'s expected process reported in full.
    pub(crate) fn reported_in_full(&self, tm: u32) -> bool {
        self.done[tm as usize]
    }

    /// TaskManager `tm` registered as `process`: the window waits for its whole report (again,
    /// after a reconnection).
    pub(crate) fn expect(&mut self, tm: u32, process: u32) {
        self.expected[tm as usize] = Some(process);
        self.done[tm as usize] = false;
    }

    /// TaskManager `tm` is gone and the window no longer waits for it (batch jobs, P3.4).
    pub(crate) fn forget(&mut self, tm: u32) {
        self.expected[tm as usize] = None;
        self.done[tm as usize] = false;
    }

    /// TaskManager `tm` is gone and its report with it, but the window still counts it:
    /// it missed the window (streaming jobs, P3.4).
    pub(crate) fn lose(&mut self, tm: u32) {
        self.done[tm as usize] = false;
    }

    /// P3.2: TaskManager `tm`'s process `process` says its report is complete. True once
    /// every expected TaskManager's is: the window closes (P3.4).
    pub(crate) fn report_done(&mut self, tm: u32, process: u32) -> bool {
        if self.expected[tm as usize] == Some(process) {
            self.done[tm as usize] = true;
        }
        self.complete()
    }

    /// Every expected TaskManager has reported in full.
    pub(crate) fn complete(&self) -> bool {
        self.expected
            .iter()
            .zip(&self.done)
            .all(|(e, &d)| e.is_none() || d)
    }

    /// Expected TaskManagers that have not reported in full.
    pub(crate) fn missing(&self) -> u32 {
        self.expected
            .iter()
            .zip(&self.done)
            .filter(|&(e, &d)| e.is_some() && !d)
            .count() as u32
    }

    /// P3.4: the window closes at `now` with what the JobMaster `judged`: the outcome of the
    /// table (FAILING if anything is unaccounted for, else FINISHED if every execution
    /// finished, else RUNNING), written into the statistics, and the trace event to record.
    pub(crate) fn end(
        &self,
        now: Instant,
        judged: &Judged,
        stats: &mut [ReconcileRecord],
    ) -> (ReconcileOutcome, TraceEvent) {
        let missing = self.missing();
        let outcome = if judged.failing || (judged.missing_counts && missing > 0) {
            ReconcileOutcome::Failing
        } else if judged.all_finished {
            ReconcileOutcome::Finished
        } else {
            ReconcileOutcome::Running
        };
        let record = &mut stats[self.record];
        record.ended = Some(now);
        record.outcome = Some(outcome);
        record.kept_running = judged.running;
        record.kept_finished = judged.finished;
        let event = TraceEvent::ReconcileEnded {
            outcome,
            reported: judged.reported,
            missing,
        };
        (outcome, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(failing: bool, all_finished: bool, missing_counts: bool) -> Judged {
        Judged {
            failing,
            all_finished,
            missing_counts,
            reported: 2,
            running: 1,
            finished: 1,
        }
    }

    #[test]
    fn closes_once_every_expected_process_reported_in_full() {
        let mut stats = Vec::new();
        let mut w = Window::open(Instant::ZERO, vec![Some(0), None, Some(3)], &mut stats);
        assert_eq!(stats.len(), 1);
        assert!(!w.report_done(0, 0));
        assert!(
            !w.report_done(2, 2),
            "another process of TaskManager 2 does not count"
        );
        assert_eq!(w.missing(), 1);
        assert!(w.report_done(2, 3));
        // A registration again (after a reconnection) waits for a whole new report.
        w.expect(0, 0);
        assert!(!w.complete());
        w.expect(0, 1);
        assert!(
            !w.report_done(0, 0),
            "a new process replaces the one expected"
        );
        assert!(w.report_done(0, 1));
        w.forget(0);
        assert!(w.complete());
        w.lose(2);
        assert_eq!(w.missing(), 1, "a lost TaskManager still counts as missing");
    }

    #[test]
    fn outcome_follows_the_table_of_p3_4() {
        let mut stats = Vec::new();
        let mut w = Window::open(Instant::ZERO, vec![Some(0), Some(0)], &mut stats);
        w.report_done(0, 0);
        let now = Instant::ZERO;
        use ReconcileOutcome::{Failing, Finished, Running};
        // (failing, all finished, missing counts) -> outcome; TaskManager 1 missed the window.
        let missed = [
            ((false, true, true), Failing),
            ((false, true, false), Finished),
        ];
        // Every TaskManager reported.
        let all_in = [
            ((true, false, true), Failing),
            ((false, false, true), Running),
        ];
        for (cases, reported) in [(missed, false), (all_in, true)] {
            if reported {
                w.report_done(1, 0);
            }
            for ((failing, all_finished, counts), expected) in cases {
                let j = judged(failing, all_finished, counts);
                assert_eq!(w.end(now, &j, &mut stats).0, expected);
            }
        }
        let (_, event) = w.end(now, &judged(false, true, true), &mut stats);
        assert!(matches!(
            event,
            TraceEvent::ReconcileEnded {
                outcome: ReconcileOutcome::Finished,
                reported: 2,
                missing: 0
            }
        ));
        assert_eq!(stats[0].outcome, Some(ReconcileOutcome::Finished));
        assert_eq!((stats[0].kept_running, stats[0].kept_finished), (1, 1));
    }
}
