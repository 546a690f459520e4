//! Two checks on executions beyond the transition table, from the oracle's own ledger of the
//! trace's execution and task states.
//!
//! `legal-transition` (F2.6): an execution vertex has one current execution. A JobMaster ends
//! an attempt it deployed (FINISHED, FAILED or CANCELED in its view) before another attempt of
//! the same subtask appears. The first is per JobMaster: a new leader starts from the job
//! events and the reports, and adopts the attempts it finds there (adopting deploys nothing).
//! And every deployment of a subtask, by whichever JobMaster, carries a higher attempt number
//! than any deployed before it: an attempt number names the attempt's partition, so a number
//! used again could make a consumer read an older attempt's partition as the new one's (the
//! numbers outlive a JobMaster, as the partitions do; F2.4 step 5, a failed replay, moves them
//! on too). P2.8: a speculative attempt (its
//! `deployed` event says so, before the JobMaster shows it) may run beside the original one,
//! one at a time.
//!
//! `slot-capacity` (P0): a TaskManager runs at most `slots_per_task_manager` tasks at once.
//! The oracle learns where each attempt went from `deployed` events and counts, per
//! TaskManager, the tasks whose own state (the TaskManager's side) is not terminal.
//!
//! `failover-scope` for batch jobs (P1.8, P2.8): once a running JobMaster times out a
//! TaskManager's heartbeat, every attempt it deployed there that is still deploying,
//! initializing or running goes FAILED in its view at that instant, before anything else
//! happens: an original and a speculative attempt alike (a speculative attempt there fails
//! alone; an original there whose speculative attempt runs elsewhere hands over to it). The
//! same holds for one attempt whose own FAILED update the JobMaster takes while it shows the
//! attempt deployed and not ended: a failed speculative attempt too, which only makes room for
//! another (P2.8).

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::ExecutionState;
use std::collections::{BTreeMap, BTreeSet};

pub(super) struct Executions {
    slots: u32,
    /// Per subtask: the attempts the current JobMaster shows that it deployed and has not
    /// ended, with their states.
    view: Vec<BTreeMap<u32, ExecutionState>>,
    /// P2.8: the attempts deployed as speculative ones.
    speculative: BTreeSet<(SubtaskId, u32)>,
    /// Per subtask: the highest attempt number any JobMaster deployed.
    highest: Vec<Option<u32>>,
    /// Where each deployed attempt went.
    placed: BTreeMap<(SubtaskId, u32), u32>,
    /// Per TaskManager: the attempts it runs (deploying, initializing or running there).
    live: Vec<BTreeSet<(SubtaskId, u32)>>,
    /// Attempts that must go FAILED in the JobMaster's view before the next event of another
    /// kind, and why.
    must_fail: Vec<(SubtaskId, u32, MustFail)>,
}

/// Why attempts must go FAILED at once.
#[derive(Clone, Copy)]
enum MustFail {
    /// The JobMaster timed out this TaskManager's heartbeat: what it deployed there.
    Lost(u32),
    /// The JobMaster took the attempt's own FAILED update.
    Reported,
}

/// An execution the JobMaster deployed and has not ended.
fn deployed_and_live(state: ExecutionState) -> bool {
    matches!(
        state,
        ExecutionState::Deploying
            | ExecutionState::Initializing
            | ExecutionState::Running
            | ExecutionState::Canceling
    )
}

impl Executions {
    pub(super) fn new(graph: &ExecutionGraph, task_managers: usize, slots: u32) -> Executions {
        let n = graph.subtasks.len();
        Executions {
            slots,
            view: vec![BTreeMap::new(); n],
            speculative: BTreeSet::new(),
            highest: vec![None; n],
            placed: BTreeMap::new(),
            live: vec![BTreeSet::new(); task_managers],
            must_fail: Vec::new(),
        }
    }

    /// The running JobMaster timed out TaskManager `tm`'s heartbeat: what it deployed there
    /// and still shows deploying, initializing or running must fail now.
    pub(super) fn timed_out(&mut self, tm: u32) {
        let hosted: Vec<_> = self
            .view
            .iter()
            .enumerate()
            .flat_map(|(i, attempts)| attempts.iter().map(move |(&a, &st)| (i, a, st)))
            .filter(|&(_, _, st)| {
                matches!(
                    st,
                    ExecutionState::Deploying
                        | ExecutionState::Initializing
                        | ExecutionState::Running
                )
            })
            .map(|(i, a, _)| (SubtaskId(i as u32), a))
            .filter(|key| self.placed.get(key) == Some(&tm))
            .collect();
        let lost = hosted.into_iter().map(|(s, a)| (s, a, MustFail::Lost(tm)));
        self.must_fail.extend(lost);
    }

    /// The JobMaster takes the FAILED update of attempt `attempt` of `s`: if it shows the
    /// attempt deployed and not ended, the attempt fails now (a speculative one alone, P2.8).
    pub(super) fn failed_reported(&mut self, s: SubtaskId, attempt: u32) {
        if self.view[s.index()].contains_key(&attempt) {
            self.must_fail.push((s, attempt, MustFail::Reported));
        }
    }

    /// An event other than an execution state change: the failures a timed-out TaskManager
    /// or a FAILED update called for are over; says which attempt was left out, if any.
    pub(super) fn settle_failures(&mut self, graph: &ExecutionGraph) -> Option<String> {
        let left = std::mem::take(&mut self.must_fail);
        let (s, attempt, state, why) = left
            .into_iter()
            .find_map(|(s, a, why)| self.view[s.index()].get(&a).map(|&st| (s, a, st, why)))?;
        let name = graph.subtask_name(s);
        Some(match why {
            MustFail::Lost(tm) => format!(
                "the JobMaster timed out TaskManager{tm}'s heartbeat but still shows attempt \
                 {attempt} of {name}, deployed there, {state}: a lost TaskManager's executions \
                 fail at once, a speculative one alone (P1.8, P2.8)"
            ),
            MustFail::Reported => format!(
                "the JobMaster took the FAILED update of attempt {attempt} of {name} but still \
                 shows it {state}: a task that failed fails in the JobMaster's view at once, a \
                 speculative attempt alone (P1.8, P2.8)"
            ),
        })
    }

    /// A new JobMaster: it has shown nothing yet.
    pub(super) fn leader_changed(&mut self) {
        self.view.iter_mut().for_each(BTreeMap::clear);
    }

    /// The JobMaster shows attempt `attempt` of `s` going to `to`.
    pub(super) fn jm_state(
        &mut self,
        graph: &ExecutionGraph,
        s: SubtaskId,
        attempt: u32,
        (from, to): (ExecutionState, ExecutionState),
    ) -> Option<String> {
        let i = s.index();
        let name = graph.subtask_name(s);
        let deploys = (from, to) == (ExecutionState::Created, ExecutionState::Deploying);
        if deploys {
            if let Some(highest) = self.highest[i].filter(|&h| attempt <= h) {
                return Some(format!(
                    "the JobMaster deploys attempt {attempt} of {name}, although attempt \
                     {highest} was deployed before (F2.6: every new execution of a vertex gets a \
                     new attempt number, above every earlier one, whichever JobMaster made it)"
                ));
            }
            self.highest[i] = Some(attempt);
        }
        let appears = !self.view[i].contains_key(&attempt);
        let others: Vec<(u32, ExecutionState)> = self.view[i]
            .iter()
            .filter(|&(&a, _)| a != attempt)
            .map(|(&a, &st)| (a, st))
            .collect();
        if deployed_and_live(to) {
            self.view[i].insert(attempt, to);
        } else {
            self.view[i].remove(&attempt);
        }
        if to == ExecutionState::Failed {
            self.must_fail.retain(|&(f, a, _)| (f, a) != (s, attempt));
        }
        let (before, state) = *others.first().filter(|_| appears)?;
        // P2.8: one speculative attempt beside the original.
        let beside = self.speculative.contains(&(s, attempt)) && others.len() == 1;
        (!beside).then(|| {
            format!(
                "the JobMaster shows attempt {attempt} of {name} while attempt {before} it \
                 deployed is still {state} (F2.6: one current execution per execution vertex; \
                 the old one ends first)"
            )
        })
    }

    /// The JobMaster deployed `attempt` of `s` to TaskManager `tm`.
    pub(super) fn deployed(&mut self, s: SubtaskId, attempt: u32, tm: u32, speculative: bool) {
        self.placed.insert((s, attempt), tm);
        if speculative {
            self.speculative.insert((s, attempt));
        }
    }

    /// On its TaskManager, `attempt` of `s` goes from `from` to `to`.
    pub(super) fn task_state(
        &mut self,
        graph: &ExecutionGraph,
        s: SubtaskId,
        attempt: u32,
        (from, to): (ExecutionState, ExecutionState),
    ) -> Option<String> {
        let tm = *self.placed.get(&(s, attempt))?;
        let live = &mut self.live[tm as usize];
        if to.is_terminal() {
            live.remove(&(s, attempt));
            return None;
        }
        if from != ExecutionState::Created || !live.insert((s, attempt)) {
            return None;
        }
        (live.len() > self.slots as usize).then(|| {
            format!(
                "TaskManager{tm} runs {} tasks once {} (attempt {attempt}) starts, but it has \
                 {} slot(s) (P0)",
                live.len(),
                graph.subtask_name(s),
                self.slots
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExecutionState::*;

    fn graph() -> ExecutionGraph {
        crate::batch::oracle::tests::src_to_sink(3)
    }

    #[test]
    fn one_current_execution_and_fresh_attempt_numbers_per_jobmaster() {
        let g = graph();
        let s = SubtaskId(0);
        let mut e = Executions::new(&g, 2, 2);
        assert_eq!(e.jm_state(&g, s, 0, (Created, Deploying)), None);
        assert_eq!(e.jm_state(&g, s, 0, (Deploying, Running)), None);
        let next = e.jm_state(&g, s, 1, (Created, Deploying));
        assert!(next.is_some(), "0 still runs");
        let mut e = Executions::new(&g, 2, 2);
        e.jm_state(&g, s, 0, (Created, Deploying));
        assert_eq!(e.jm_state(&g, s, 0, (Deploying, Failed)), None);
        assert_eq!(e.jm_state(&g, s, 1, (Created, Deploying)), None, "0 ended");
        assert_eq!(e.jm_state(&g, s, 1, (Deploying, Canceled)), None);
        let again = e.jm_state(&g, s, 0, (Created, Deploying));
        assert!(again.is_some(), "0 deployed again");
        // Adopting an attempt (a recovered finish) deploys nothing.
        assert_eq!(e.jm_state(&g, s, 0, (Created, Finished)), None);
        // A placeholder of a reconcile window is not an execution it deployed.
        let mut e = Executions::new(&g, 2, 2);
        e.jm_state(&g, s, 2, (Created, Reconciling));
        assert_eq!(e.jm_state(&g, s, 0, (Reconciling, Running)), None);
        // A new leader adopts what it finds.
        e.leader_changed();
        assert_eq!(e.jm_state(&g, s, 2, (Created, Deploying)), None);
    }

    #[test]
    fn a_task_manager_runs_at_most_its_slots() {
        let g = graph();
        let mut e = Executions::new(&g, 2, 2);
        let start = |e: &mut Executions, s: u32, tm: u32| {
            e.deployed(SubtaskId(s), 0, tm, false);
            e.task_state(&g, SubtaskId(s), 0, (Created, Deploying))
        };
        assert_eq!(start(&mut e, 0, 1), None);
        assert_eq!(start(&mut e, 1, 1), None);
        assert_eq!(start(&mut e, 2, 0), None, "another TaskManager");
        assert_eq!(
            e.task_state(&g, SubtaskId(1), 0, (Deploying, Running)),
            None
        );
        assert!(
            start(&mut e, 3, 1).is_some(),
            "a third task on TaskManager1"
        );
        let mut e = Executions::new(&g, 2, 2);
        start(&mut e, 0, 1);
        start(&mut e, 1, 1);
        assert_eq!(e.task_state(&g, SubtaskId(0), 0, (Running, Finished)), None);
        assert_eq!(start(&mut e, 3, 1), None, "a slot was freed");
    }

    #[test]
    fn a_lost_task_manager_fails_everything_the_jobmaster_deployed_there() {
        let g = graph();
        let (s0, s1, s2) = (SubtaskId(0), SubtaskId(1), SubtaskId(2));
        let setup = || {
            let mut e = Executions::new(&g, 2, 2);
            // s0's original on TaskManager0 and its speculative attempt on TaskManager1;
            // s1 on TaskManager1, finished; s2 on TaskManager1, running.
            e.deployed(s0, 0, 0, false);
            e.jm_state(&g, s0, 0, (Created, Deploying));
            e.jm_state(&g, s0, 0, (Deploying, Running));
            e.deployed(s0, 1, 1, true);
            e.jm_state(&g, s0, 1, (Created, Deploying));
            e.deployed(s1, 0, 1, false);
            e.jm_state(&g, s1, 0, (Created, Deploying));
            e.jm_state(&g, s1, 0, (Deploying, Finished));
            e.deployed(s2, 0, 1, false);
            e.jm_state(&g, s2, 0, (Created, Deploying));
            e.jm_state(&g, s2, 0, (Deploying, Running));
            e
        };
        let mut e = setup();
        assert_eq!(e.settle_failures(&g), None, "nothing was lost");
        e.timed_out(1);
        e.jm_state(&g, s2, 0, (Running, Failed));
        let left = e
            .settle_failures(&g)
            .expect("the speculative attempt was left");
        assert!(left.contains("attempt 1 of src[0]"), "{left}");
        assert!(left.contains("DEPLOYING"), "{left}");
        assert_eq!(e.settle_failures(&g), None, "settled once");
        let mut e = setup();
        e.timed_out(1);
        e.jm_state(&g, s0, 1, (Deploying, Failed));
        e.jm_state(&g, s2, 0, (Running, Failed));
        assert_eq!(
            e.settle_failures(&g),
            None,
            "both failed; the original elsewhere runs on"
        );
    }

    #[test]
    fn a_failed_update_the_jobmaster_takes_fails_that_attempt_at_once() {
        let g = graph();
        let s0 = SubtaskId(0);
        let setup = || {
            let mut e = Executions::new(&g, 2, 2);
            // s0's original on TaskManager0, its speculative attempt on TaskManager1.
            e.deployed(s0, 0, 0, false);
            e.jm_state(&g, s0, 0, (Created, Deploying));
            e.jm_state(&g, s0, 0, (Deploying, Running));
            e.deployed(s0, 1, 1, true);
            e.jm_state(&g, s0, 1, (Created, Deploying));
            e.jm_state(&g, s0, 1, (Deploying, Running));
            e
        };
        // The speculative attempt's FAILED taken and shown: it alone fails.
        let mut e = setup();
        e.failed_reported(s0, 1);
        e.jm_state(&g, s0, 1, (Running, Failed));
        assert_eq!(e.settle_failures(&g), None);
        // Taken but ignored: caught at the next event of another kind.
        let mut e = setup();
        e.failed_reported(s0, 1);
        let left = e
            .settle_failures(&g)
            .expect("the speculative attempt was left running");
        assert!(left.contains("attempt 1 of src[0]"), "{left}");
        assert!(left.contains("RUNNING"), "{left}");
        // The update of an attempt the JobMaster already ended asks for nothing.
        let mut e = setup();
        e.jm_state(&g, s0, 0, (Running, Canceled));
        e.failed_reported(s0, 0);
        assert_eq!(e.settle_failures(&g), None);
    }
}
