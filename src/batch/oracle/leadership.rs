//! `failover-scope`'s TaskManager side of F2.5: a TaskManager cut off from its JobMaster for
//! longer than the heartbeat timeout loses its leader when that timeout runs out (and with it
//! the job's running tasks, F2.7), and a TaskManager only ever loses a leader it has.
//!
//! The ledger is the oracle's own: how long each disconnection lasts comes from the scenario's
//! fault plan (the `disconnect_task_manager` fault a `fault_fired` event names), the timeout
//! from the scenario's `jobmaster.heartbeat_timeout`, and whether a TaskManager has a leader
//! from the `leader_found`, `leader_lost` and process events. The deadline is computed here,
//! not read from the model's timer, so a timer never armed, armed with the wrong duration or
//! ignored when it fires is caught alike.

use crate::scenario::{Fault, FaultKind};
use crate::trace::{FaultEvent, TraceEvent};
use sim::{Duration, Instant};

pub(super) struct Leadership {
    heartbeat: Duration,
    /// Per fault of the scenario: how long it cuts its TaskManager off, if it is a
    /// disconnection.
    cuts: Vec<Option<Duration>>,
    /// Per TaskManager: it has a leader. Every TaskManager starts registered with the first
    /// JobMaster.
    leader: Vec<bool>,
    /// Per TaskManager: the length of the disconnection whose fault fired in this instant,
    /// until the TaskManager records that it is cut off (it is not if it was already).
    firing: Vec<Option<Duration>>,
    /// Per TaskManager: (since, deadline): cut off since `since` for longer than the heartbeat
    /// timeout, it must have lost its leader by `deadline`.
    due: Vec<Option<(Instant, Instant)>>,
    /// The earliest deadline in `due` (`Instant::MAX`: none), so that the check on every event
    /// of a batch run is one comparison while no TaskManager is cut off.
    earliest: Instant,
}

impl Leadership {
    pub(super) fn new(task_managers: usize, heartbeat: Duration, faults: &[Fault]) -> Self {
        let cuts = faults
            .iter()
            .map(|f| match f.kind {
                FaultKind::DisconnectTaskManager { duration, .. } => Some(duration),
                _ => None,
            })
            .collect();
        Leadership {
            heartbeat,
            cuts,
            leader: vec![true; task_managers],
            firing: vec![None; task_managers],
            due: vec![None; task_managers],
            earliest: Instant::MAX,
        }
    }

    /// Judges `event` at `now`: a deadline that passed without the loss, or a loss of a leader
    /// the TaskManager did not have.
    pub(super) fn observe(&mut self, now: Instant, event: &TraceEvent) -> Option<String> {
        let overdue = self.overdue(now);
        let wrong = match *event {
            TraceEvent::FaultFired {
                index,
                fault: FaultEvent::DisconnectTaskManager(tm),
            } => {
                self.firing[tm as usize] = self.cuts.get(index as usize).copied().flatten();
                None
            }
            TraceEvent::TaskManagerDisconnected { task_manager } => {
                let tm = task_manager as usize;
                // F2.5: both sides miss heartbeats; a cut shorter than the timeout is noticed
                // only when the connection comes back.
                if let Some(cut) = self.firing[tm].take() {
                    if cut > self.heartbeat && self.leader[tm] {
                        let by = now + self.heartbeat;
                        self.due[tm] = Some((now, by));
                        self.earliest = self.earliest.min(by);
                    }
                }
                None
            }
            TraceEvent::LeaderLost { task_manager } => {
                let tm = task_manager as usize;
                self.due[tm] = None;
                let had = std::mem::replace(&mut self.leader[tm], false);
                (!had).then(|| {
                    format!(
                        "TaskManager {task_manager} loses its leader, but it had none to lose \
                         (F2.5: it lost the last one and found no new one since)"
                    )
                })
            }
            TraceEvent::LeaderFound { task_manager } => {
                self.leader[task_manager as usize] = true;
                None
            }
            // A dead process has no leader, and its replacement none yet.
            TraceEvent::TaskManagerLost { task_manager }
            | TraceEvent::TaskManagerStarted { task_manager } => {
                self.leader[task_manager as usize] = false;
                self.due[task_manager as usize] = None;
                None
            }
            _ => None,
        };
        wrong.or(overdue)
    }

    /// The end of the run: a deadline before its last instant was missed (one at that
    /// instant could still be on either side of it).
    pub(super) fn finish(&mut self, now: Instant) -> Option<String> {
        self.overdue(now)
    }

    fn overdue(&mut self, now: Instant) -> Option<String> {
        if self.earliest >= now {
            return None;
        }
        // A deadline passed (or was met, and its entry cleared): the one overdue, if any, is
        // told and dropped, and the earliest of the rest is the next to watch.
        let late = (self.due.iter()).position(|d| d.is_some_and(|(_, by)| by < now));
        let taken = late.and_then(|tm| Some((tm, self.due[tm].take()?)));
        self.earliest = (self.due.iter().flatten().map(|&(_, by)| by))
            .min()
            .unwrap_or(Instant::MAX);
        let (tm, (since, by)) = taken?;
        Some(format!(
            "TaskManager {tm}, cut off from its JobMaster at {since} for longer than the \
             heartbeat timeout ({}), still has its leader after {by} (F2.5: it loses it, and \
             the job's running tasks with it, when the timeout runs out)",
            self.heartbeat
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::FaultTrigger;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    /// Two TaskManagers, a 10 ms heartbeat timeout; fault 0 cuts TaskManager 1 off for
    /// `cut_ms`, and fires at 5 ms.
    fn cut_off(cut_ms: u64) -> Leadership {
        let fault = Fault {
            trigger: FaultTrigger::At(Duration::from_nanos(5 * MS)),
            kind: FaultKind::DisconnectTaskManager {
                task_manager: 1,
                duration: Duration::from_nanos(cut_ms * MS),
            },
        };
        let mut l = Leadership::new(2, Duration::from_nanos(10 * MS), &[fault]);
        let fired = TraceEvent::FaultFired {
            index: 0,
            fault: FaultEvent::DisconnectTaskManager(1),
        };
        assert_eq!(l.observe(at(5), &fired), None);
        let cut = TraceEvent::TaskManagerDisconnected { task_manager: 1 };
        assert_eq!(l.observe(at(5), &cut), None);
        l
    }

    const LOST: TraceEvent = TraceEvent::LeaderLost { task_manager: 1 };
    const OTHER: TraceEvent = TraceEvent::JobResultWritten;

    #[test]
    fn a_long_cut_loses_the_leader_when_the_timeout_runs_out() {
        let mut l = cut_off(30);
        assert_eq!(l.observe(at(15), &LOST), None);
        assert_eq!(l.observe(at(40), &OTHER), None);
        assert_eq!(l.finish(at(50)), None);
    }

    #[test]
    fn a_long_cut_that_keeps_the_leader_is_caught_after_the_deadline() {
        let mut l = cut_off(30);
        assert_eq!(
            l.observe(at(15), &OTHER),
            None,
            "the deadline instant is the model's"
        );
        let late = l.observe(at(16), &OTHER).expect("overdue");
        assert!(late.contains("TaskManager 1"), "{late}");
        assert_eq!(l.observe(at(17), &OTHER), None, "reported once");
        assert!(
            cut_off(30).finish(at(16)).is_some(),
            "the end of the run judges too"
        );
        assert_eq!(cut_off(30).finish(at(15)), None);
    }

    #[test]
    fn a_cut_within_the_timeout_owes_nothing() {
        let mut l = cut_off(10);
        assert_eq!(l.observe(at(40), &OTHER), None);
    }

    #[test]
    fn a_leader_is_lost_once_and_a_new_process_has_none() {
        let mut l = cut_off(30);
        assert_eq!(l.observe(at(15), &LOST), None);
        assert!(l.observe(at(16), &LOST).is_some(), "lost twice");
        let mut l = cut_off(30);
        let crash = TraceEvent::TaskManagerLost { task_manager: 1 };
        assert_eq!(
            l.observe(at(7), &crash),
            None,
            "a dead process owes nothing"
        );
        assert!(
            l.observe(at(20), &LOST).is_some(),
            "it had no leader to lose"
        );
        let found = TraceEvent::LeaderFound { task_manager: 1 };
        assert_eq!(l.observe(at(30), &found), None);
        assert_eq!(l.observe(at(40), &LOST), None);
    }
}
