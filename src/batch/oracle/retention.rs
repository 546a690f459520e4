//! `minimal-rerun`'s view of which partitions a TaskManager still holds (F2.5): a TaskManager
//! that lost its JobManager and found no new one within `batch.registration_timeout` released
//! every partition it held, so a later report of one of them is a partition that should be
//! missing, and the subtask behind it should run again (P2.4 step 4).
//!
//! The ledger is the oracle's own: where each attempt was deployed (`deployed`), when its
//! partition was written there (`partition_written`), and when each TaskManager lost and found
//! a leader (`leader_lost`, `leader_found`). The cleanup instant is computed here from the
//! scenario's timeout, not read from the model's timer, so a timer armed late, with the wrong
//! duration or not at all is caught as well as a cleanup that was skipped.
//!
//! The same ledger judges the other side: a TaskManager without a leader takes no JobMaster's
//! RPC (it fences them all, F2.5), so it releases a partition only when it loses its leader
//! (F2.1, when it keeps none) or when its registration timeout runs out, counted from its
//! latest loss. A release at any other instant, such as a timer armed by an earlier loss
//! acting after a later one, is a partition lost that the job still needed.

use crate::graph::SubtaskId;
use crate::trace::TraceEvent;
use sim::{Duration, Instant};
use std::collections::BTreeMap;

/// A partition a leaderless TaskManager released at an instant no rule explains.
#[derive(Debug, PartialEq)]
pub(super) struct Unexplained {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub tm: u32,
    /// Since when it has had no leader.
    pub since: Instant,
    /// When its registration timeout runs out, if one is configured.
    pub deadline: Option<Instant>,
}

pub(super) struct Retention {
    /// `batch.registration_timeout`; `None`: partitions wait for a new JobManager forever.
    timeout: Option<Duration>,
    /// Per TaskManager: since when it has had no leader, if a cleanup is still to come.
    leaderless_since: Vec<Option<Instant>>,
    /// Per TaskManager: the latest instant it had to release its partitions.
    cleaned_at: Vec<Option<Instant>>,
    /// Per attempt: the TaskManager it was deployed to.
    placed: BTreeMap<(SubtaskId, u32), u32>,
    /// Per attempt: where and when its partition was written on a TaskManager.
    written: BTreeMap<(SubtaskId, u32), (u32, Instant)>,
}

impl Retention {
    pub(super) fn new(task_managers: usize, timeout: Option<Duration>) -> Retention {
        Retention {
            timeout,
            leaderless_since: vec![None; task_managers],
            cleaned_at: vec![None; task_managers],
            placed: BTreeMap::new(),
            written: BTreeMap::new(),
        }
    }

    /// Takes `event` at `now` into the ledger; a release it cannot explain, if `event` is one.
    pub(super) fn observe(&mut self, now: Instant, event: &TraceEvent) -> Option<Unexplained> {
        match *event {
            TraceEvent::PartitionReleased {
                subtask,
                attempt,
                remote: false,
            } => {
                let &(tm, _) = self.written.get(&(subtask, attempt))?;
                let since = self.leaderless_since[tm as usize]?;
                let deadline = self.timeout.map(|t| since + t);
                // F2.1: dropped with the leader; F2.5: at the registration timeout.
                if now != since && deadline != Some(now) {
                    return Some(Unexplained {
                        subtask,
                        attempt,
                        tm,
                        since,
                        deadline,
                    });
                }
            }
            TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                ..
            } => {
                self.placed.insert((subtask, attempt), task_manager);
            }
            TraceEvent::PartitionWritten {
                subtask,
                attempt,
                remote: false,
                ..
            } => {
                if let Some(&tm) = self.placed.get(&(subtask, attempt)) {
                    self.written.insert((subtask, attempt), (tm, now));
                }
            }
            TraceEvent::LeaderLost { task_manager } => {
                // A new loss arms a new timer; one already due has fired first.
                self.settle(task_manager, now);
                self.leaderless_since[task_manager as usize] = Some(now);
            }
            TraceEvent::LeaderFound { task_manager } => {
                self.settle(task_manager, now);
                self.leaderless_since[task_manager as usize] = None;
            }
            TraceEvent::TaskManagerStarted { task_manager } => {
                // A new process holds nothing of the old one's and has had no leader to lose.
                let tm = task_manager as usize;
                self.leaderless_since[tm] = None;
                self.cleaned_at[tm] = None;
                self.written.retain(|_, (t, _)| *t != task_manager);
            }
            _ => {}
        }
        None
    }

    /// If TaskManager `tm`'s registration timeout ran out before `now`, it cleaned up then.
    /// An instant equal to the deadline could be on either side of the timer: the ledger
    /// gives the model the benefit of that doubt.
    fn settle(&mut self, tm: u32, now: Instant) {
        let tm = tm as usize;
        if let (Some(since), Some(timeout)) = (self.leaderless_since[tm], self.timeout) {
            let deadline = since + timeout;
            if deadline < now {
                self.cleaned_at[tm] = Some(deadline);
                self.leaderless_since[tm] = None;
            }
        }
    }

    /// A report from TaskManager `tm` of `subtask`'s partition (attempt `attempt`) reached
    /// the JobMaster. Returns when that partition was released, if it was: the TaskManager
    /// sent the report after it found its new leader, so every cleanup it owed is settled.
    pub(super) fn reported(
        &self,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
    ) -> Option<Instant> {
        let &(on, written) = self.written.get(&(subtask, attempt))?;
        let cleaned = self.cleaned_at[tm as usize]?;
        (on == tm && written < cleaned).then_some(cleaned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * MS)
    }

    /// TaskManager 0 holds the partition of subtask 0 (attempt 0), written at 5 ms, and loses
    /// its leader at 10 ms; the registration timeout is 40 ms.
    fn holding(timeout: Option<u64>) -> Retention {
        let mut r = Retention::new(2, timeout.map(|ms| Duration::from_nanos(ms * MS)));
        let s = SubtaskId(0);
        r.observe(
            at(1),
            &TraceEvent::Deployed {
                subtask: s,
                attempt: 0,
                task_manager: 0,
                speculative: false,
            },
        );
        r.observe(
            at(5),
            &TraceEvent::PartitionWritten {
                subtask: s,
                attempt: 0,
                bytes: 10,
                remote: false,
            },
        );
        r.observe(at(10), &TraceEvent::LeaderLost { task_manager: 0 });
        r
    }

    fn found(r: &mut Retention, ms: u64) -> Option<Instant> {
        r.observe(at(ms), &TraceEvent::LeaderFound { task_manager: 0 });
        r.reported(0, (SubtaskId(0), 0))
    }

    #[test]
    fn a_leader_found_after_the_timeout_means_the_partitions_are_gone() {
        assert_eq!(found(&mut holding(Some(40)), 51), Some(at(50)));
    }

    #[test]
    fn a_leader_found_in_time_or_exactly_at_the_deadline_keeps_them() {
        assert_eq!(found(&mut holding(Some(40)), 49), None);
        assert_eq!(
            found(&mut holding(Some(40)), 50),
            None,
            "a tie is the model's"
        );
    }

    fn released(r: &mut Retention, ms: u64) -> Option<Unexplained> {
        let release = TraceEvent::PartitionReleased {
            subtask: SubtaskId(0),
            attempt: 0,
            remote: false,
        };
        r.observe(at(ms), &release)
    }

    #[test]
    fn a_leaderless_taskmanager_releases_only_at_the_loss_or_its_deadline() {
        assert_eq!(released(&mut holding(Some(40)), 10), None, "at the loss");
        assert_eq!(
            released(&mut holding(Some(40)), 50),
            None,
            "at the deadline"
        );
        assert_eq!(
            released(&mut holding(None), 10),
            None,
            "no timeout: at the loss"
        );
        let early = released(&mut holding(Some(40)), 30).expect("before the deadline");
        assert_eq!(
            (early.tm, early.since, early.deadline),
            (0, at(10), Some(at(50)))
        );
        assert!(released(&mut holding(Some(40)), 51).is_some(), "after it");
        assert!(
            released(&mut holding(None), 30).is_some(),
            "no timeout ever runs out"
        );
        // A second loss re-arms the timer: the first one's deadline explains nothing.
        let mut r = holding(Some(40));
        r.observe(at(20), &TraceEvent::LeaderFound { task_manager: 0 });
        r.observe(at(30), &TraceEvent::LeaderLost { task_manager: 0 });
        assert!(released(&mut r, 50).is_some(), "the first loss's deadline");
        assert_eq!(released(&mut r, 70), None, "the second loss's deadline");
        // With a leader, a release is the JobMaster's to order (checked elsewhere).
        let mut r = holding(Some(40));
        r.observe(at(20), &TraceEvent::LeaderFound { task_manager: 0 });
        assert_eq!(released(&mut r, 25), None);
    }

    #[test]
    fn without_a_registration_timeout_they_wait_forever() {
        assert_eq!(found(&mut holding(None), 10_000), None);
    }

    #[test]
    fn a_second_loss_arms_a_new_timer_after_the_first_one_fired() {
        let mut r = holding(Some(40));
        r.observe(at(45), &TraceEvent::LeaderLost { task_manager: 0 });
        assert_eq!(
            found(&mut r, 80),
            None,
            "the first timer was superseded at 45ms"
        );
        let mut r = holding(Some(40));
        r.observe(at(60), &TraceEvent::LeaderLost { task_manager: 0 });
        assert_eq!(found(&mut r, 61), Some(at(50)), "the first timer had fired");
    }

    #[test]
    fn only_the_cleaned_taskmanager_and_older_partitions_count() {
        let mut r = holding(Some(40));
        r.observe(at(51), &TraceEvent::LeaderFound { task_manager: 0 });
        assert_eq!(
            r.reported(1, (SubtaskId(0), 0)),
            None,
            "another TaskManager"
        );
        r.observe(
            at(52),
            &TraceEvent::Deployed {
                subtask: SubtaskId(1),
                attempt: 0,
                task_manager: 0,
                speculative: false,
            },
        );
        r.observe(
            at(53),
            &TraceEvent::PartitionWritten {
                subtask: SubtaskId(1),
                attempt: 0,
                bytes: 10,
                remote: false,
            },
        );
        assert_eq!(r.reported(0, (SubtaskId(1), 0)), None, "written after it");
        r.observe(at(60), &TraceEvent::TaskManagerStarted { task_manager: 0 });
        assert_eq!(r.reported(0, (SubtaskId(0), 0)), None, "a new process");
    }

    #[test]
    fn a_restart_forgets_only_its_own_partitions_and_a_tie_is_the_models() {
        // TaskManager 1 holds the partition of subtask 1, written at 5 ms, and finds no leader
        // until 60 ms: cleaned at 50 ms. TaskManager 0 restarting must not forget that.
        let mut r = holding(Some(40));
        let s1 = SubtaskId(1);
        r.observe(
            at(1),
            &TraceEvent::Deployed {
                subtask: s1,
                attempt: 0,
                task_manager: 1,
                speculative: false,
            },
        );
        r.observe(
            at(5),
            &TraceEvent::PartitionWritten {
                subtask: s1,
                attempt: 0,
                bytes: 10,
                remote: false,
            },
        );
        r.observe(at(10), &TraceEvent::LeaderLost { task_manager: 1 });
        r.observe(at(60), &TraceEvent::LeaderFound { task_manager: 1 });
        r.observe(at(61), &TraceEvent::TaskManagerStarted { task_manager: 0 });
        assert_eq!(r.reported(1, (s1, 0)), Some(at(50)));
        // A partition written at the very instant of the cleanup may have come after it.
        let mut r = holding(Some(40));
        r.observe(
            at(49),
            &TraceEvent::Deployed {
                subtask: s1,
                attempt: 0,
                task_manager: 0,
                speculative: false,
            },
        );
        r.observe(
            at(50),
            &TraceEvent::PartitionWritten {
                subtask: s1,
                attempt: 0,
                bytes: 10,
                remote: false,
            },
        );
        r.observe(at(51), &TraceEvent::LeaderFound { task_manager: 0 });
        assert_eq!(r.reported(0, (s1, 0)), None);
        assert_eq!(r.reported(0, (SubtaskId(0), 0)), Some(at(50)));
    }
}
