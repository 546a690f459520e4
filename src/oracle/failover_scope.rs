//! `failover-scope` (P1.8): a failover fails only the executions a fault explains, and
//! restarts exactly what Flink's failover strategy restarts.
//!
//! - **Whom a failover fails.** The JobMaster marks an execution FAILED only when that attempt
//!   failed itself (its task recorded FAILED: an injected task failure, a lost connection, or
//!   its TaskManager died under it), when the TaskManager process its deployment was sent to
//!   has died since (the attempt never started there), or when a reconciling JobMaster learned
//!   nothing of it (P3.4). An execution on a TaskManager that lives on is cancelled, never
//!   failed.
//! - **What a failover restarts.** Under `failover_scope: region` a failure restarts the failed
//!   subtask's pipelined region, every subtask connected to it by channels (all streaming
//!   exchanges are pipelined), and the job stays RUNNING; under `full` it restarts every
//!   subtask and the job goes RESTARTING first. A failure outside the scope of a restart that
//!   is still pending either widens it to the whole job (the JobMaster handles it while the
//!   restart waits) or starts a failover of its own once that restart redeployed (the
//!   JobMaster handled the failures of one lost TaskManager in turn, and the first completed
//!   the pending restart). Once the job finished, no restart may still be pending: the failed
//!   scope ran again.
//!
//! The oracle keeps its own ledger: the pipelined regions it computes from the job's channels
//! (a flood fill, not the model's union-find), the job status it saw, where each attempt's
//! deployment was sent, how often each TaskManager process died, and the pending restart.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::FailoverScope as Scope;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::Instant;

/// A failover the oracle expects to see through: which subtasks it must redeploy.
struct Pending {
    /// The failure that started it; `None` for the whole-job restart that a reconciliation
    /// ending FAILING starts (P3.4).
    cause: Option<SubtaskId>,
    expected: Vec<bool>,
    redeployed: Vec<bool>,
    /// A whole-job restart: the job must be RESTARTING while it redeploys.
    whole: bool,
    /// Failures outside the scope while it was pending: they widen it, or each starts a
    /// failover of its own once it redeployed.
    deferred: Vec<SubtaskId>,
    index: u64,
    at: Instant,
}

pub struct FailoverScope {
    full: bool,
    /// Per subtask, its pipelined region, numbered by the region's smallest subtask.
    region: Vec<u32>,
    status: JobStatus,
    /// Per subtask: the TaskManager, the process number and the attempt of the latest
    /// deployment sent.
    submitted: Vec<Option<(u32, u32, u32)>>,
    /// Per TaskManager: how many of its processes died so far (process `p` is dead once this
    /// exceeds `p`).
    deaths: Vec<u32>,
    /// Per subtask: the latest attempt whose task recorded FAILED itself.
    task_failed: Vec<Option<u32>>,
    pending: Option<Pending>,
}

/// Labels every subtask with the smallest subtask reachable from it over channels, in either
/// direction.
fn pipelined_regions(graph: &ExecutionGraph) -> Vec<u32> {
    let n = graph.subtasks.len();
    let mut neighbours = vec![Vec::new(); n];
    for c in &graph.channels {
        neighbours[c.from.index()].push(c.to.0);
        neighbours[c.to.index()].push(c.from.0);
    }
    let mut region = vec![u32::MAX; n];
    for start in 0..n as u32 {
        if region[start as usize] != u32::MAX {
            continue;
        }
        region[start as usize] = start;
        let mut stack = vec![start];
        while let Some(s) = stack.pop() {
            for &t in &neighbours[s as usize] {
                if region[t as usize] == u32::MAX {
                    region[t as usize] = start;
                    stack.push(t);
                }
            }
        }
    }
    region
}

impl FailoverScope {
    pub fn new(graph: &ExecutionGraph, scope: Scope, task_managers: usize) -> FailoverScope {
        let n = graph.subtasks.len();
        FailoverScope {
            full: scope == Scope::Full,
            region: pipelined_regions(graph),
            status: JobStatus::Initializing,
            submitted: vec![None; n],
            deaths: vec![0; task_managers],
            task_failed: vec![None; n],
            pending: None,
        }
    }

    /// A deployment handed to TaskManager process `process` (the send ledger).
    pub fn sent(&mut self, to: Address, process: u32, rpc: Rpc) {
        if let (Address::TaskManager(tm), Call::SubmitTask(_)) = (to, rpc.call) {
            self.submitted[rpc.subtask.index()] = Some((tm, process, rpc.attempt));
        }
    }

    /// Sees one status change or process death (the caller filters the rest out); returns the
    /// violation it shows, if any.
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        match *event {
            TraceEvent::JobStatus { to, .. } => {
                self.status = to;
                if matches!(to, JobStatus::Failing | JobStatus::Failed) {
                    self.pending = None; // the job gives up: nothing restarts
                }
                if to == JobStatus::Finished {
                    return self.unfinished_restart(graph, index, now);
                }
                // P3.4: a reconciliation that ended FAILING restarts the whole job.
                if to == JobStatus::Restarting && self.pending.is_none() {
                    let n = self.region.len();
                    self.pending = Some(Pending {
                        cause: None,
                        expected: vec![true; n],
                        redeployed: vec![false; n],
                        whole: true,
                        deferred: Vec::new(),
                        index,
                        at: now,
                    });
                }
                None
            }
            // A new JobMaster deploys the job on its own terms.
            TraceEvent::JobMasterLost { .. } | TraceEvent::JobMasterElected { .. } => {
                self.pending = None;
                None
            }
            TraceEvent::TaskManagerLost { task_manager } => {
                self.deaths[task_manager as usize] += 1;
                None
            }
            TraceEvent::TaskState {
                subtask,
                attempt,
                to: ExecutionState::Failed,
                ..
            } => {
                self.task_failed[subtask.index()] = Some(attempt);
                None
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to: ExecutionState::Failed,
            } => {
                if let Some(v) = self.unexplained_failure(graph, subtask, attempt, from, index, now)
                {
                    return Some(v);
                }
                // P3.4: a reconciliation that ends FAILING restarts the whole job itself.
                if from != ExecutionState::Reconciling {
                    self.failed(subtask, index, now);
                }
                None
            }
            TraceEvent::ExecutionState {
                subtask,
                to: ExecutionState::Scheduled,
                ..
            } => self.redeployed(graph, subtask, index, now),
            _ => None,
        }
    }

    /// P1.8: only a fault makes an execution FAILED.
    fn unexplained_failure(
        &self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        attempt: u32,
        from: ExecutionState,
        index: u64,
        now: Instant,
    ) -> Option<Violation> {
        // P3.4: a reconciling JobMaster fails what no TaskManager reported.
        if from == ExecutionState::Reconciling || self.task_failed[subtask.index()] == Some(attempt)
        {
            return None;
        }
        if let Some((tm, process, sent)) = self.submitted[subtask.index()] {
            if sent == attempt && self.deaths[tm as usize] > process {
                return None; // deployed to a process that died since
            }
        }
        Some(Violation {
            invariant: Invariant::FailoverScope,
            time: now,
            actors: vec![
                "JobMaster".to_owned(),
                graph.subtask_name(subtask).to_string(),
            ],
            event_index: index,
            message: format!(
                "the JobMaster marked {} attempt {attempt} FAILED (from {from}), but the task did \
                 not fail and the TaskManager process it was deployed to is alive: only a \
                 fault fails an execution; a failover cancels the others (P1.8)",
                graph.subtask_name(subtask)
            ),
        })
    }

    /// A failure starts a failover, joins the pending one, or widens it to the whole job.
    fn failed(&mut self, subtask: SubtaskId, index: u64, now: Instant) {
        if !matches!(self.status, JobStatus::Running | JobStatus::Restarting) {
            return; // reconciling or giving up: P3.4 and the FAILING path decide
        }
        let n = self.region.len();
        match &mut self.pending {
            Some(p) if p.expected[subtask.index()] => {} // one more casualty of the same failover
            Some(p) => p.deferred.push(subtask),
            None => {
                let region = self.region[subtask.index()];
                self.pending = Some(Pending {
                    cause: Some(subtask),
                    expected: (0..n)
                        .map(|s| self.full || self.region[s] == region)
                        .collect(),
                    redeployed: vec![false; n],
                    whole: self.full,
                    deferred: Vec::new(),
                    index,
                    at: now,
                });
            }
        }
    }

    /// A new attempt of `subtask` is scheduled: it must be in the pending failover's scope,
    /// with the job status its scope calls for.
    fn redeployed(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        index: u64,
        now: Instant,
    ) -> Option<Violation> {
        let p = self.pending.as_mut()?;
        // A redeployment beyond the region, or while RESTARTING, shows that a deferred failure
        // widened the restart to the whole job.
        if !p.whole
            && !p.deferred.is_empty()
            && (!p.expected[subtask.index()] || self.status == JobStatus::Restarting)
        {
            p.expected.fill(true);
            p.whole = true;
        }
        let name = graph.subtask_name(subtask).to_string();
        let wrong = if !p.expected[subtask.index()] {
            Some(format!(
                "{name} was redeployed, but the failure of {} restarts only its pipelined region",
                p.cause
                    .map_or("?".to_owned(), |c| graph.subtask_name(c).to_string())
            ))
        } else if p.whole && self.status != JobStatus::Restarting {
            Some(format!(
                "{name} was redeployed by a whole-job restart while the job was {}, not \
                 RESTARTING",
                self.status
            ))
        } else if !p.whole && self.status != JobStatus::Running {
            Some(format!(
                "{name} was redeployed by a region restart while the job was {}: a region \
                 failover leaves the job RUNNING",
                self.status
            ))
        } else {
            None
        };
        p.redeployed[subtask.index()] = true;
        if p.redeployed.iter().zip(&p.expected).all(|(&r, &e)| r || !e) {
            let done = self.pending.take().expect("pending");
            // After a region restart, each deferred failure has its own failover; a whole-job
            // restart redeployed them too.
            if !done.whole {
                for s in done.deferred {
                    self.failed(s, index, now);
                }
            }
        }
        wrong.map(|message| Violation {
            invariant: Invariant::FailoverScope,
            time: now,
            actors: vec!["JobMaster".to_owned(), name],
            event_index: index,
            message: format!("{message} (P1.8)"),
        })
    }

    /// The job finished with a failed scope never redeployed in full.
    fn unfinished_restart(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
    ) -> Option<Violation> {
        let p = self.pending.take()?;
        let missing: Vec<String> = (0..p.expected.len())
            .filter(|&s| p.expected[s] && !p.redeployed[s])
            .map(|s| graph.subtask_name(SubtaskId(s as u32)).to_string())
            .collect();
        Some(Violation {
            invariant: Invariant::FailoverScope,
            time: now,
            actors: vec!["JobMaster".to_owned()],
            event_index: index,
            message: format!(
                "the job FINISHED, but the failover that {} started at {} (event {}) never \
                 redeployed {} (P1.8)",
                p.cause.map_or("the reconciliation".to_owned(), |c| graph
                    .subtask_name(c)
                    .to_string()),
                p.at,
                p.index,
                missing.join(", ")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Restore;

    /// `src[0]` → `sink[0]`: one region of two subtasks.
    fn graph() -> ExecutionGraph {
        crate::oracle::tests::source_to_sink()
    }

    fn state(subtask: u32, attempt: u32, from: ExecutionState, to: ExecutionState) -> TraceEvent {
        TraceEvent::ExecutionState {
            subtask: SubtaskId(subtask),
            attempt,
            from,
            to,
        }
    }

    fn status(from: JobStatus, to: JobStatus) -> TraceEvent {
        TraceEvent::JobStatus { from, to }
    }

    fn submit(o: &mut FailoverScope, subtask: u32, attempt: u32, tm: u32, process: u32) {
        o.sent(
            Address::TaskManager(tm),
            process,
            Rpc {
                subtask: SubtaskId(subtask),
                attempt,
                call: Call::SubmitTask(Restore::FRESH),
            },
        );
    }

    fn running(scope: Scope) -> FailoverScope {
        let g = graph();
        let mut o = FailoverScope::new(&g, scope, 2);
        for e in [
            status(JobStatus::Initializing, JobStatus::Created),
            status(JobStatus::Created, JobStatus::Running),
        ] {
            assert!(o.observe(&g, 0, Instant::ZERO, &e).is_none());
        }
        submit(&mut o, 0, 0, 0, 0);
        submit(&mut o, 1, 0, 1, 0);
        o
    }

    use ExecutionState::{Canceling, Created, Failed, Running, Scheduled};

    #[test]
    fn an_execution_fails_only_if_its_task_failed_or_its_process_died() {
        let g = graph();
        let t = Instant::ZERO;
        // Nothing explains it: a violation.
        let mut o = running(Scope::Full);
        let v = o.observe(&g, 7, t, &state(0, 0, Running, Failed)).unwrap();
        assert_eq!(v.invariant, Invariant::FailoverScope);
        assert_eq!(v.event_index, 7);
        // The task failed itself (same attempt): fine; an older attempt's failure is not.
        let mut o = running(Scope::Full);
        let failed = |attempt| TraceEvent::TaskState {
            subtask: SubtaskId(0),
            attempt,
            from: Running,
            to: Failed,
        };
        assert!(o.observe(&g, 1, t, &failed(0)).is_none());
        assert!(o.observe(&g, 2, t, &state(0, 0, Running, Failed)).is_none());
        let mut o = running(Scope::Full);
        o.observe(&g, 1, t, &failed(1));
        assert!(o.observe(&g, 2, t, &state(0, 0, Running, Failed)).is_some());
        // Its deployment went to a process that died since: fine, but not to another
        // TaskManager's death, nor to a death before the process it was sent to.
        let mut o = running(Scope::Full);
        let lost = |task_manager| TraceEvent::TaskManagerLost { task_manager };
        o.observe(&g, 1, t, &lost(1));
        assert!(o.observe(&g, 2, t, &state(0, 0, Running, Failed)).is_some());
        assert!(o.observe(&g, 3, t, &state(1, 0, Running, Failed)).is_none());
        let mut o = running(Scope::Full);
        o.observe(&g, 1, t, &lost(0));
        submit(&mut o, 0, 1, 0, 1);
        assert!(o.observe(&g, 2, t, &state(0, 1, Running, Failed)).is_some());
        // A reconciling JobMaster fails what nobody reported.
        let mut o = running(Scope::Full);
        let from = ExecutionState::Reconciling;
        assert!(o.observe(&g, 2, t, &state(0, 0, from, Failed)).is_none());
    }

    #[test]
    fn a_full_failover_redeploys_while_restarting_and_a_region_one_while_running() {
        let g = graph();
        let t = Instant::ZERO;
        let fail = TraceEvent::TaskManagerLost { task_manager: 0 };
        let redeploy = |s| state(s, 1, Created, Scheduled);
        // Full: RESTARTING first.
        let mut o = running(Scope::Full);
        o.observe(&g, 1, t, &fail);
        assert!(o.observe(&g, 2, t, &state(0, 0, Running, Failed)).is_none());
        o.observe(&g, 3, t, &state(1, 0, Running, Canceling));
        assert!(o.observe(&g, 4, t, &redeploy(0)).is_some());
        let mut o = running(Scope::Full);
        o.observe(&g, 1, t, &fail);
        o.observe(&g, 2, t, &state(0, 0, Running, Failed));
        o.observe(&g, 3, t, &status(JobStatus::Running, JobStatus::Restarting));
        assert!(o.observe(&g, 4, t, &redeploy(0)).is_none());
        assert!(o.observe(&g, 5, t, &redeploy(1)).is_none());
        o.observe(&g, 6, t, &status(JobStatus::Restarting, JobStatus::Running));
        assert!(o.pending.is_none());
        // Region: the job stays RUNNING.
        let mut o = running(Scope::Region);
        o.observe(&g, 1, t, &fail);
        o.observe(&g, 2, t, &state(0, 0, Running, Failed));
        o.observe(&g, 3, t, &status(JobStatus::Running, JobStatus::Restarting));
        assert!(o.observe(&g, 4, t, &redeploy(0)).is_some());
        let mut o = running(Scope::Region);
        o.observe(&g, 1, t, &fail);
        o.observe(&g, 2, t, &state(0, 0, Running, Failed));
        assert!(o.observe(&g, 4, t, &redeploy(0)).is_none());
        assert!(o.observe(&g, 5, t, &redeploy(1)).is_none());
        assert!(o.pending.is_none());
    }

    #[test]
    fn a_region_failover_restarts_its_region_only_and_must_be_seen_through() {
        // Two regions: a → b, and c alone.
        let s = crate::scenario::parse(
            r#"{"name": "t", "mode": "streaming", "job": {"vertices": [
                {"id": "a", "operator": "source", "parallelism": 1, "records": 1},
                {"id": "b", "operator": "sink", "parallelism": 1},
                {"id": "c", "operator": "source", "parallelism": 1, "records": 1}],
                "edges": [{"from": "a", "to": "b", "pattern": "all_to_all"}]}}"#,
            "t",
        )
        .expect("valid");
        let g = ExecutionGraph::build(&s.job);
        assert_eq!(pipelined_regions(&g), vec![0, 0, 2]);
        let t = Instant::ZERO;
        let start = || {
            let mut o = FailoverScope::new(&g, Scope::Region, 1);
            o.observe(&g, 0, t, &status(JobStatus::Created, JobStatus::Running));
            o.observe(&g, 1, t, &TraceEvent::TaskManagerLost { task_manager: 0 });
            submit(&mut o, 0, 0, 0, 0);
            submit(&mut o, 2, 0, 0, 0);
            o.observe(&g, 2, t, &state(0, 0, Running, Failed));
            o
        };
        // Redeploying the other region is a violation.
        let mut o = start();
        assert!(o
            .observe(&g, 3, t, &state(2, 1, Created, Scheduled))
            .is_some());
        // Finishing with the failed region only half redeployed is one too.
        let mut o = start();
        assert!(o
            .observe(&g, 3, t, &state(0, 1, Created, Scheduled))
            .is_none());
        let v = o
            .observe(&g, 4, t, &status(JobStatus::Running, JobStatus::Finished))
            .unwrap();
        assert!(v.message.contains("b[0]"), "{}", v.message);
        // A failure of the other region while the restart is pending widens it to the whole
        // job, which redeploys while RESTARTING.
        let mut o = start();
        o.observe(&g, 3, t, &state(2, 0, Running, Failed));
        o.observe(&g, 4, t, &status(JobStatus::Running, JobStatus::Restarting));
        for s in 0..3 {
            assert!(o
                .observe(&g, 5, t, &state(s, 1, Created, Scheduled))
                .is_none());
        }
        assert!(o.pending.is_none());
        // Or the pending restart completes first and the other failure restarts its own
        // region afterwards, the job RUNNING throughout; the job may not finish before it did.
        let mut o = start();
        o.observe(&g, 3, t, &state(2, 0, Running, Failed));
        for s in 0..2 {
            assert!(o
                .observe(&g, 4, t, &state(s, 1, Created, Scheduled))
                .is_none());
        }
        let finished = status(JobStatus::Running, JobStatus::Finished);
        assert!(o.observe(&g, 5, t, &finished).is_some());
        let mut o = start();
        o.observe(&g, 3, t, &state(2, 0, Running, Failed));
        for s in 0..3 {
            assert!(o
                .observe(&g, 4, t, &state(s, 1, Created, Scheduled))
                .is_none());
        }
        assert!(o.observe(&g, 5, t, &finished).is_none());
    }
}
