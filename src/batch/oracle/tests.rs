//! Unit tests of the batch oracles' own checks: each feeds synthetic trace events, as the batch
//! world would record them, to the oracles of a two-vertex job `src[0]` → `sink[0]`,
//! and asserts both the violation and its clean counterpart. Campaigns reach these checks only
//! through rare runs; these pin each rule down on its own.

use super::*;
use crate::trace::ReconcileOutcome;
use crate::trace::{FlushReason, RerunReason};
use sim::Duration;

const SRC: SubtaskId = SubtaskId(0);

/// The execution graph of a batch job `src` (`sources` subtasks, a coordinator with that many
/// splits) → `sink` (1), all-to-all, for the ledgers' own unit tests.
pub(super) fn src_to_sink(sources: u32) -> ExecutionGraph {
    let text = format!(
        r#"{{"name": "t", "mode": "batch",
        "job": {{"vertices": [
            {{"id": "src", "operator": "source", "parallelism": {sources}, "records": 4}},
            {{"id": "sink", "operator": "sink", "parallelism": 1}}],
          "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]}},
        "cluster": {{"task_managers": 2, "slots_per_task_manager": 2}},
        "batch": {{"coordinators": {{"src": {{"splits": {sources}}}}}}}}}"#
    );
    ExecutionGraph::build(&crate::scenario::parse(&text, "t").expect("valid").job)
}

struct Feed {
    graph: ExecutionGraph,
    oracles: BatchOracles,
    index: u64,
    now: Instant,
}

impl Feed {
    /// The job with `shuffle` (`internal` or `remote`).
    fn new(shuffle: &str) -> Feed {
        let text = format!(
            r#"{{"name": "t", "mode": "batch",
            "job": {{"vertices": [
                {{"id": "src", "operator": "source", "parallelism": 1, "records": 4}},
                {{"id": "sink", "operator": "sink", "parallelism": 1}}],
              "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]}},
            "cluster": {{"task_managers": 2, "slots_per_task_manager": 2}},
            "batch": {{"shuffle": {{"kind": "{shuffle}"}},
                       "coordinators": {{"src": {{"splits": 1}}}}}}}}"#
        );
        let scenario = crate::scenario::parse(&text, "t").expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        let batch = scenario.batch.expect("a batch job");
        let mut jobmaster = scenario.jobmaster;
        jobmaster.reconcile_timeout = Duration::from_millis(50);
        let oracles = BatchOracles::new(&graph, &batch, (2, 2), vec![false; 2], &jobmaster, &[]);
        Feed {
            graph,
            oracles,
            index: 0,
            now: Instant::ZERO,
        }
    }

    fn event(&mut self, event: TraceEvent) {
        self.index += 1;
        self.now = self.now.saturating_add(Duration::from_millis(1));
        self.oracles
            .observe(&self.graph, self.index, self.now, &event);
    }

    /// A new JobMaster's window opens (the job RECONCILING).
    fn open(&mut self) {
        self.event(TraceEvent::JobStatus {
            from: JobStatus::Created,
            to: JobStatus::Reconciling,
        });
    }

    /// The JobMaster keeps `s` finished from the job events.
    fn recovered(&mut self, s: SubtaskId) {
        self.event(TraceEvent::ExecutionState {
            subtask: s,
            attempt: 0,
            from: ExecutionState::Created,
            to: ExecutionState::Finished,
        });
    }

    /// Both vertices initialized and `src[0]` finished at `location` with a snapshot, all
    /// flushed: a recovery may keep `src[0]`.
    fn durable_finish(&mut self, location: Location) {
        for vertex in [0, 1] {
            self.oracles.logged(
                &self.graph,
                &JobEvent::VertexInitialized {
                    vertex: VertexId(vertex),
                    parallelism: 1,
                },
            );
        }
        self.oracles.logged(
            &self.graph,
            &JobEvent::Finished {
                subtask: SRC,
                attempt: 0,
                location,
                bytes: 64,
                snapshot: Some(Box::new(super::super::events::Snapshot {
                    enumerators: vec![None, None],
                })),
            },
        );
        self.event(TraceEvent::JobEventsFlushed {
            events: 3,
            reason: FlushReason::Interval,
        });
    }

    fn recovery_ended(&mut self, recovered: u32) {
        self.event(TraceEvent::RecoveryEnded {
            recovered,
            rerun: 0,
            timed_out: true,
        });
    }

    /// A partition report from TaskManager `tm`, process 0.
    fn report(&mut self, s: SubtaskId, tm: u32) {
        let (now, index) = (self.now, self.index);
        self.oracles.report_arrived(s, 0, (tm, 0), now, index);
    }

    fn finish(self) -> Vec<Invariant> {
        let current = Current {
            attempts: vec![None; 2],
            processes: vec![Some(0); 2],
        };
        self.finish_with(&current)
    }

    fn finish_with(self, current: &Current) -> Vec<Invariant> {
        let at = (self.now, self.index);
        let violations = self
            .oracles
            .finish(&self.graph, JobStatus::Running, &[], at, current);
        violations.into_iter().map(|v| v.invariant).collect()
    }

    fn violations(&self) -> Vec<Invariant> {
        self.oracles
            .violations
            .iter()
            .map(|v| v.invariant)
            .collect()
    }
}

/// F2.4: a partition reported after recovery ended must be released, unless its TaskManager
/// died since; one reported outside any recovery (at a plain registration) is not late.
#[test]
fn a_late_partition_must_be_released_unless_its_taskmanager_died() {
    let mut run = Feed::new("internal");
    run.open();
    run.recovery_ended(0);
    run.report(SRC, 1);
    assert_eq!(run.finish(), [Invariant::MinimalRerun]);

    let mut run = Feed::new("internal");
    run.open();
    run.recovery_ended(0);
    run.report(SRC, 1);
    run.event(TraceEvent::TaskManagerLost { task_manager: 1 });
    assert_eq!(run.finish(), []);

    let mut run = Feed::new("internal");
    run.report(SRC, 1);
    assert_eq!(run.finish(), [], "no recovery ran: the report is not late");
}

/// P3.4: a reconciliation that ends FAILING goes on to P2.4 in the same window, which
/// `minimal-rerun` judges; one that ends RUNNING recovers nothing by P2.4.
#[test]
fn only_a_failing_reconciliation_is_followed_by_a_judged_recovery() {
    for (outcome, judged) in [
        (ReconcileOutcome::Failing, true),
        (ReconcileOutcome::Running, false),
    ] {
        let mut run = Feed::new("internal");
        run.open();
        run.event(TraceEvent::ReconcileEnded {
            outcome,
            reported: 0,
            missing: 1,
        });
        // Nothing was logged, so nothing may be kept finished.
        run.recovered(SRC);
        run.recovery_ended(1);
        let want = if judged {
            vec![Invariant::MinimalRerun]
        } else {
            vec![]
        };
        let got: Vec<Invariant> = run
            .violations()
            .into_iter()
            .filter(|&i| i == Invariant::MinimalRerun)
            .collect();
        assert_eq!(got, want, "{}", outcome.name());
    }
}

/// P2.4: a remote partition the shuffle service released is gone: its producer, durable and
/// snapshotted, must run again for the consumer that still needs it.
#[test]
fn a_released_remote_partition_is_not_available_to_recovery() {
    for released in [false, true] {
        let mut run = Feed::new("remote");
        run.durable_finish(Location::Remote);
        run.event(TraceEvent::PartitionWritten {
            subtask: SRC,
            attempt: 0,
            bytes: 64,
            remote: true,
        });
        if released {
            run.event(TraceEvent::PartitionReleased {
                subtask: SRC,
                attempt: 0,
                remote: true,
            });
        }
        run.event(TraceEvent::JobMasterLost { incarnation: 0 });
        run.open();
        run.recovered(SRC);
        run.recovery_ended(1);
        let want = if released {
            vec![Invariant::MinimalRerun]
        } else {
            vec![]
        };
        assert_eq!(run.violations(), want, "released: {released}");
    }
}

/// P2.4: before `previous_worker_timeout` (30 s by default) a new JobManager waits for the
/// partition of a finished producer whose consumer must run again; at the deadline it stops.
#[test]
fn recovery_waits_for_a_needed_partition_until_the_deadline() {
    let location = Location::TaskManager {
        task_manager: 1,
        process: 0,
    };
    for (end_after, reported, stopped_early) in [
        (Duration::from_millis(5), false, true),
        (Duration::from_millis(5), true, false),
        (Duration::from_millis(30_000), false, false),
    ] {
        let mut run = Feed::new("internal");
        run.durable_finish(location);
        run.event(TraceEvent::JobMasterLost { incarnation: 0 });
        run.open();
        let opened = run.now;
        if reported {
            run.report(SRC, 1);
            run.recovered(SRC);
        } else {
            // A recovery that does not keep SRC logs its reset, as the JobMaster does (P2.2).
            run.oracles.logged(
                &run.graph,
                &JobEvent::Reset {
                    subtasks: vec![SRC],
                },
            );
        }
        // The next event (the end) comes 1 ms after `now`.
        let before = Duration::from_nanos(end_after.as_nanos() - 1_000_000);
        run.now = opened.saturating_add(before);
        run.recovery_ended(u32::from(reported));
        let want = if stopped_early {
            vec![Invariant::MinimalRerun]
        } else {
            vec![]
        };
        assert_eq!(
            run.violations(),
            want,
            "after {end_after}, reported: {reported}"
        );
    }
}

/// P3.3: an RPC refused while reconciling must be applied later, unless moot: its attempt was
/// superseded or is terminal in the JobMaster's view, or its TaskManager process is gone.
#[test]
fn a_refused_rpc_never_applied_is_lost_unless_moot() {
    let refused = |attempts: Vec<Option<(u32, ExecutionState)>>, processes| {
        let mut run = Feed::new("internal");
        let (now, index) = (run.now, run.index);
        let rpc = TaskRpc {
            call: Call::Running,
            subtask: SRC,
            attempt: 0,
        };
        run.oracles.rpc_sent(1, 0, rpc);
        run.oracles
            .rpc_refused(&run.graph, (1, 0), on_the_wire(rpc), (now, index));
        run.finish_with(&Current {
            attempts,
            processes,
        })
    };
    let running = ExecutionState::Running;
    let alive = vec![Some(0), Some(0)];
    assert_eq!(
        refused(vec![Some((0, running)), None], alive.clone()),
        [Invariant::NoLostRpc]
    );
    assert_eq!(refused(vec![Some((1, running)), None], alive.clone()), []);
    assert_eq!(
        refused(vec![Some((0, ExecutionState::Finished)), None], alive),
        []
    );
    assert_eq!(
        refused(vec![Some((0, running)), None], vec![Some(0), Some(1)]),
        []
    );
}

/// P2.1: a vertex is initialized after its input vertices, with the parallelism the scenario
/// fixes (the adaptive formula is shown on `batch-adaptive-parallelism-rounds-up`).
#[test]
fn a_vertex_is_initialized_after_its_inputs_with_its_fixed_parallelism() {
    let initialized = |run: &mut Feed, vertex: u32, parallelism: u32, adaptive: bool| {
        run.event(TraceEvent::VertexInitialized {
            vertex: VertexId(vertex),
            parallelism,
            input_bytes: 0,
            adaptive,
        });
        run.violations()
    };
    let mut run = Feed::new("internal");
    assert_eq!(initialized(&mut run, 0, 1, false), []);
    assert_eq!(initialized(&mut run, 1, 1, false), []);
    for (vertex, parallelism, adaptive) in [(1, 1, false), (0, 2, false), (0, 1, true)] {
        let mut run = Feed::new("internal");
        if vertex == 1 {
            // The sink before its source.
            assert_eq!(
                initialized(&mut run, 1, parallelism, adaptive),
                [Invariant::AdaptiveParallelism]
            );
        } else {
            assert_eq!(
                initialized(&mut run, 0, parallelism, adaptive),
                [Invariant::AdaptiveParallelism]
            );
        }
    }
}

/// P3.2 (P2.4 step 1 across JobMaster lives): a full restart voids every decided parallelism,
/// but a later reconciliation that ends RUNNING adopts a finished execution decided before it,
/// with the parallelism its report carries; its consumers may then be initialized. Without the
/// report the input is unknown and initializing its consumer is early.
/// (The proptest case `batch_recovery_keeps_every_guarantee`, seed 752033, shrank to this.)
#[test]
fn a_vertex_adopted_by_a_reconciliation_after_a_full_restart_counts_as_initialized() {
    for adopted in [true, false] {
        let mut run = Feed::new("internal");
        run.event(TraceEvent::VertexInitialized {
            vertex: VertexId(0),
            parallelism: 1,
            input_bytes: 0,
            adaptive: false,
        });
        run.event(TraceEvent::PartitionWritten {
            subtask: SRC,
            attempt: 0,
            bytes: 64,
            remote: false,
        });
        // A JobMaster restarts the job from scratch (P2.6) and dies before deploying anything.
        run.event(TraceEvent::RecoveryStarted {
            replayed: 0,
            discarded: 0,
            full_restart: true,
        });
        run.event(TraceEvent::JobMasterLost { incarnation: 1 });
        run.event(TraceEvent::JobMasterElected { incarnation: 2 });
        run.open();
        let (now, index) = (run.now, run.index);
        let at = (now, index);
        for tm in [0, 1] {
            run.oracles
                .received(&run.graph, (tm, 0), Received::Register, at);
        }
        if adopted {
            let execution = Received::Execution {
                subtask: SRC,
                attempt: 0,
                state: ExecutionState::Finished,
                parallelism: 1,
            };
            let partition = Received::Partition {
                subtask: SRC,
                attempt: 0,
            };
            for what in [execution, partition] {
                run.oracles.received(&run.graph, (0, 0), what, at);
            }
        }
        for tm in [0, 1] {
            run.oracles
                .received(&run.graph, (tm, 0), Received::Done, at);
        }
        if adopted {
            for (from, to) in [
                (ExecutionState::Created, ExecutionState::Reconciling),
                (ExecutionState::Reconciling, ExecutionState::Finished),
            ] {
                run.event(TraceEvent::ExecutionState {
                    subtask: SRC,
                    attempt: 0,
                    from,
                    to,
                });
            }
        }
        run.event(TraceEvent::ReconcileEnded {
            outcome: ReconcileOutcome::Running,
            reported: u32::from(adopted),
            missing: 0,
        });
        run.event(TraceEvent::VertexInitialized {
            vertex: VertexId(1),
            parallelism: 1,
            input_bytes: 64,
            adaptive: false,
        });
        let want = if adopted {
            vec![]
        } else {
            vec![Invariant::AdaptiveParallelism]
        };
        assert_eq!(run.violations(), want, "adopted: {adopted}");
    }
}

/// P2.1: a partition is written where the scenario's shuffle keeps partitions.
#[test]
fn a_partition_is_written_where_the_shuffle_keeps_them() {
    for (shuffle, remote, wrong) in [
        ("internal", false, false),
        ("internal", true, true),
        ("remote", true, false),
        ("remote", false, true),
    ] {
        let mut run = Feed::new(shuffle);
        run.event(TraceEvent::PartitionWritten {
            subtask: SRC,
            attempt: 0,
            bytes: 64,
            remote,
        });
        let want = if wrong {
            vec![Invariant::MinimalRerun]
        } else {
            vec![]
        };
        assert_eq!(run.violations(), want, "{shuffle}, remote: {remote}");
    }
}

/// One step of the RPC ledger: a send, a loss at the send, a refusal, or the JobMaster taking it.
#[derive(Clone, Copy)]
enum Step {
    Sent(u32, u32, TaskRpc),
    Lost(u32, u32, TaskRpc),
    Refused(u32, u32, TaskRpc),
    Taken(u32, u32, TaskRpc),
    /// A JobManager incarnation crashed, or was elected.
    JobManagerLost(u32),
    JobManagerElected(u32),
    /// The TaskManager sent its kept RPCs again.
    Resent(u32),
}

fn rpc_steps(steps: &[Step]) -> Vec<Invariant> {
    let mut run = Feed::new("internal");
    for &step in steps {
        let at = (run.now, run.index);
        match step {
            Step::Sent(tm, p, rpc) => run.oracles.rpc_sent(tm, p, rpc),
            Step::Lost(tm, p, rpc) => run.oracles.rpc_lost(tm, p, rpc),
            Step::Refused(tm, p, rpc) => {
                let msg = on_the_wire(rpc);
                run.oracles.rpc_refused(&run.graph, (tm, p), msg, at)
            }
            Step::Taken(tm, p, rpc) => run.oracles.rpc_applied(&run.graph, (tm, p), rpc, at),
            Step::JobManagerLost(incarnation) => {
                run.event(TraceEvent::JobMasterLost { incarnation })
            }
            Step::JobManagerElected(incarnation) => {
                run.event(TraceEvent::JobMasterElected { incarnation })
            }
            Step::Resent(tm) => run.oracles.rpcs_resent(tm, at),
        }
    }
    run.violations()
}

fn rpc(call: Call) -> TaskRpc {
    TaskRpc {
        call,
        subtask: SRC,
        attempt: 0,
    }
}

/// P3.3: a task RPC is applied only by the JobManager it went to (the leader when sent, the
/// next one while none leads); one on the wire when its JobManager crashed reaches the next only
/// by a resend.
#[test]
fn a_task_rpc_is_applied_only_by_the_jobmanager_it_went_to() {
    use Step::*;
    let running = rpc(Call::Running);
    let crash = [JobManagerLost(0), JobManagerElected(1)];
    let then = |before: &[Step], after: &[Step]| rpc_steps(&[before, &crash[..], after].concat());
    assert_eq!(
        then(&[Sent(0, 0, running)], &[Taken(0, 0, running)]),
        [Invariant::RpcOrder],
        "sent to JobManager 0, taken by JobManager 1"
    );
    assert!(then(&[Sent(0, 0, running)], &[Resent(0), Taken(0, 0, running)]).is_empty());
    assert!(
        rpc_steps(&[
            JobManagerLost(0),
            Sent(0, 0, running),
            JobManagerElected(1),
            Taken(0, 0, running)
        ])
        .is_empty(),
        "sent while none leads: to the next"
    );
    assert!(then(&[], &[Sent(0, 0, running), Taken(0, 0, running)]).is_empty());
}

/// P0, P3.3: the JobMaster takes one TaskManager's task RPCs in the order they were first
/// sent, each once, and only from the process that sent it; other TaskManagers' links are
/// ordered on their own.
#[test]
fn task_rpcs_are_taken_in_send_order_once_and_from_their_sender() {
    use Step::*;
    let (running, finished) = (rpc(Call::Running), rpc(Call::Finished));
    let order = [Invariant::RpcOrder];
    let sent_both = [Sent(0, 0, running), Sent(0, 0, finished)];
    let steps = |then: &[Step]| [&sent_both[..], then].concat();
    assert_eq!(
        rpc_steps(&steps(&[Taken(0, 0, running), Taken(0, 0, finished)])),
        []
    );
    assert_eq!(
        rpc_steps(&steps(&[Taken(0, 0, finished), Taken(0, 0, running)])),
        order
    );
    // Refused and kept, then resent: the resend keeps its first place.
    let kept = [
        Refused(0, 0, running),
        Taken(0, 0, running),
        Taken(0, 0, finished),
    ];
    assert_eq!(rpc_steps(&steps(&kept)), []);
    assert_eq!(
        rpc_steps(&steps(&[Taken(0, 1, running)])),
        order,
        "another process"
    );
    let twice = [Taken(0, 0, running), Taken(0, 0, running)];
    assert_eq!(rpc_steps(&steps(&twice)), order, "taken twice");
    assert_eq!(
        rpc_steps(&[Refused(0, 0, running)]),
        order,
        "refused, never sent"
    );
    let two_links = [Sent(0, 0, running), Sent(1, 0, finished)];
    let crossed = [
        &two_links[..],
        &[Taken(1, 0, finished), Taken(0, 0, running)],
    ]
    .concat();
    assert_eq!(rpc_steps(&crossed), []);
}

/// An RPC lost at its send (its link was cut) leaves the ledger: an identical one sent later
/// is another RPC, ranked where it was sent.
#[test]
fn an_rpc_lost_at_its_send_is_not_the_one_sent_again() {
    use Step::*;
    let (request, finished) = (rpc(Call::RequestSplit), rpc(Call::Finished));
    let steps = [
        Sent(0, 0, request),
        Lost(0, 0, request),
        Sent(0, 0, finished),
        Sent(0, 0, request),
        Taken(0, 0, finished),
        Taken(0, 0, request),
    ];
    assert_eq!(rpc_steps(&steps), []);
    let not_lost = [&steps[..1], &steps[2..]].concat();
    assert_eq!(rpc_steps(&not_lost), [Invariant::RpcOrder]);
}

/// P2.2: a reset is in the job event log before anything is deployed again; otherwise a
/// later recovery would trust the finish it undid.
#[test]
fn a_reset_is_logged_before_the_next_deployment() {
    let deployed_after = |log_it: bool| {
        let mut run = Feed::new("internal");
        run.event(TraceEvent::SubtaskReset {
            subtask: SRC,
            reason: RerunReason::Failover,
        });
        if log_it {
            run.oracles.logged(
                &run.graph,
                &JobEvent::Reset {
                    subtasks: vec![SRC],
                },
            );
        }
        run.event(TraceEvent::Deployed {
            subtask: SRC,
            attempt: 1,
            task_manager: 0,
            speculative: false,
        });
        run.violations()
    };
    assert_eq!(deployed_after(true), []);
    assert_eq!(deployed_after(false), [Invariant::MinimalRerun]);
}

/// P3.3: a kept RPC is kept until it is applied; lost when sent again (a resend on a cut
/// link), it is still owed, and `no-lost-rpc` judges it at the end like any refused one.
#[test]
fn a_kept_rpc_lost_when_sent_again_is_still_owed() {
    let mut run = Feed::new("internal");
    let (now, index) = (run.now, run.index);
    let running = rpc(Call::Running);
    run.oracles.rpc_sent(1, 0, running);
    run.oracles
        .rpc_refused(&run.graph, (1, 0), on_the_wire(running), (now, index));
    run.oracles.rpc_lost(1, 0, running);
    let found = run.finish_with(&Current {
        attempts: vec![Some((0, ExecutionState::Running)), None],
        processes: vec![Some(0), Some(0)],
    });
    assert_eq!(found, [Invariant::NoLostRpc]);
}

/// P2.2 with P3.2: a window that ends RUNNING without keeping a durable finish logs that
/// finish's reset as it ends, before anything else: logged, it is clean; the JobMaster
/// acting first (here, a TaskManager's disconnection taken) or the run ending without it is
/// a violation.
#[test]
fn a_running_window_logs_the_reset_of_every_durable_finish_it_did_not_keep() {
    let ended = |then: Option<bool>| {
        let mut run = Feed::new("internal");
        run.durable_finish(Location::TaskManager {
            task_manager: 0,
            process: 0,
        });
        run.open();
        run.event(TraceEvent::ReconcileEnded {
            outcome: ReconcileOutcome::Running,
            reported: 0,
            missing: 0,
        });
        match then {
            Some(true) => run.oracles.logged(
                &run.graph,
                &JobEvent::Reset {
                    subtasks: vec![SRC],
                },
            ),
            Some(false) => run.event(TraceEvent::TaskManagerDisconnected { task_manager: 1 }),
            None => {}
        }
        let mut found = run.finish();
        found.retain(|&i| i == Invariant::MinimalRerun);
        found
    };
    assert_eq!(ended(Some(true)), []);
    assert_eq!(ended(Some(false)), [Invariant::MinimalRerun]);
    assert_eq!(ended(None), [Invariant::MinimalRerun]);
}

/// P3.2 with P2.4: a window that ends FAILING recovers from the durable job events on a fresh
/// graph, which uses a reported partition only if the log names that attempt in that place;
/// any other reported partition must be released (unless its TaskManager died).
#[test]
fn a_failing_window_releases_every_report_the_log_does_not_name() {
    let unreleased = |tm: u32, attempt: u32, released: bool| {
        let mut run = Feed::new("internal");
        run.durable_finish(Location::TaskManager {
            task_manager: 0,
            process: 0,
        });
        run.open();
        let what = Received::Partition {
            subtask: SRC,
            attempt,
        };
        let at = (run.now, run.index);
        run.oracles
            .received(&run.graph, (tm, 0), Received::Register, at);
        run.oracles.received(&run.graph, (tm, 0), what, at);
        // Neither TaskManager finished its report: the window ends FAILING at its timeout.
        run.now = run.now.saturating_add(Duration::from_millis(60));
        run.event(TraceEvent::ReconcileEnded {
            outcome: ReconcileOutcome::Failing,
            reported: 0,
            missing: 2,
        });
        if released {
            run.event(TraceEvent::ReleaseRequested {
                task_manager: tm,
                subtask: SRC,
                attempt,
            });
        }
        let current = Current {
            attempts: vec![None; 2],
            processes: vec![Some(0); 2],
        };
        let at = (run.now, run.index);
        run.oracles
            .finish(&run.graph, JobStatus::Running, &[], at, &current)
            .into_iter()
            .filter(|v| v.message.contains("never released"))
            .count()
    };
    assert_eq!(unreleased(0, 0, false), 0, "the logged partition is kept");
    assert_eq!(
        unreleased(0, 1, false),
        1,
        "another attempt in the logged place"
    );
    assert_eq!(
        unreleased(1, 0, false),
        1,
        "the logged attempt in another place"
    );
    assert_eq!(unreleased(0, 1, true), 0, "released");
}

/// P2.2, F2.3: the trace's figures of the job event log (flushed, lost at a crash, lost to a
/// failed write) must be the oracle's own count of the write buffer; a crash or a flush with
/// nothing buffered says nothing.
#[test]
fn the_job_event_log_figures_are_the_ledgers_own_count() {
    let flushed = |events| TraceEvent::JobEventsFlushed {
        events,
        reason: FlushReason::Interval,
    };
    let crash = || TraceEvent::JobMasterLost { incarnation: 0 };
    let write_failure = || TraceEvent::FaultFired {
        index: 0,
        fault: FaultEvent::JobEventsWriteFailure,
    };
    let lost = |events| TraceEvent::JobEventsLost { events };
    let write_failed = |events| TraceEvent::JobEventsWriteFailed { events };
    // (what, events buffered first, then the trace, clean)
    let cases = [
        ("a flush of the whole buffer", 2, vec![flushed(2)], true),
        ("a flush of part of it", 2, vec![flushed(1)], false),
        ("a flush of nothing", 0, vec![flushed(0)], false),
        ("a crash losing two, told", 2, vec![crash(), lost(2)], true),
        (
            "a crash losing two, told one",
            2,
            vec![crash(), lost(1)],
            false,
        ),
        (
            "a crash losing nothing, told it lost none",
            0,
            vec![crash(), lost(0)],
            false,
        ),
        (
            "a failed write losing one, told",
            1,
            vec![write_failure(), write_failed(1)],
            true,
        ),
        (
            "a failed write losing one, told none",
            1,
            vec![write_failure(), write_failed(0)],
            false,
        ),
    ];
    for (what, buffered, trace, clean) in cases {
        let mut run = Feed::new("internal");
        for vertex in 0..buffered {
            run.oracles.logged(
                &run.graph,
                &JobEvent::VertexInitialized {
                    vertex: VertexId(vertex),
                    parallelism: 1,
                },
            );
        }
        for event in trace {
            run.event(event);
        }
        let want = if clean {
            vec![]
        } else {
            vec![Invariant::MinimalRerun]
        };
        assert_eq!(run.violations(), want, "{what}");
    }
}

/// F2.6: a deployment carries an attempt number above every earlier deployed one of its
/// subtask, across JobMasters too (attempt numbers name partitions).
#[test]
fn a_new_jobmaster_never_deploys_an_attempt_number_used_before() {
    for (second, clean) in [(3, true), (2, false), (1, false)] {
        let mut run = Feed::new("internal");
        let deploy = |run: &mut Feed, attempt| {
            run.event(TraceEvent::ExecutionState {
                subtask: SRC,
                attempt,
                from: ExecutionState::Created,
                to: ExecutionState::Deploying,
            });
        };
        deploy(&mut run, 2);
        run.event(TraceEvent::JobMasterLost { incarnation: 0 });
        run.event(TraceEvent::JobMasterElected { incarnation: 1 });
        deploy(&mut run, second);
        let want = if clean {
            vec![]
        } else {
            vec![Invariant::LegalTransition]
        };
        assert_eq!(run.violations(), want, "attempt {second} after attempt 2");
    }
}

/// P2.7: the job's result is written `batch.job_result_delay` (1 ms here, one event of the
/// feed) after the FINISHED of the JobMaster still leading, and by no JobMaster that crashed.
#[test]
fn the_jobs_result_is_written_only_by_the_jobmaster_that_finished_it_and_on_time() {
    let written = |between: Option<TraceEvent>| {
        let mut run = Feed::new("internal");
        run.event(TraceEvent::JobStatus {
            from: JobStatus::Running,
            to: JobStatus::Finished,
        });
        if let Some(e) = between {
            run.event(e);
        }
        run.event(TraceEvent::JobResultWritten);
        let mut found = run.finish();
        found.retain(|&i| i == Invariant::MinimalRerun);
        found
    };
    assert_eq!(written(None), []);
    let late = TraceEvent::TaskManagerDisconnected { task_manager: 1 };
    assert_eq!(written(Some(late)), [Invariant::MinimalRerun], "1 ms late");
    let crashed = TraceEvent::JobMasterLost { incarnation: 0 };
    assert_eq!(
        written(Some(crashed)),
        [Invariant::MinimalRerun],
        "its JobMaster crashed"
    );
}

/// The message a TaskManager hands to its link for task RPC `rpc`.
fn on_the_wire(rpc: TaskRpc) -> crate::trace::Rpc {
    use crate::trace::Call as Wire;
    let call = match rpc.call {
        Call::Running => Wire::update(ExecutionState::Running),
        Call::Finished => Wire::update(ExecutionState::Finished),
        Call::Failed => Wire::update(ExecutionState::Failed),
        Call::RequestSplit => Wire::RequestSplit,
    };
    crate::trace::Rpc::new(rpc.subtask, rpc.attempt, call)
}

/// P3.3: a reconciling JobMaster refuses only a task's RPCs, as the ledger reads them; the
/// message for each task RPC reads back as that RPC.
#[test]
fn only_a_tasks_rpc_is_refused() {
    for call in [
        Call::Running,
        Call::Finished,
        Call::Failed,
        Call::RequestSplit,
    ] {
        let rpc = TaskRpc {
            call,
            subtask: SRC,
            attempt: 0,
        };
        assert_eq!(TaskRpc::of(on_the_wire(rpc)), Some(rpc));
    }
    let mut run = Feed::new("internal");
    let at = (run.now, run.index);
    let canceled =
        crate::trace::Rpc::new(SRC, 0, crate::trace::Call::update(ExecutionState::Canceled));
    run.oracles.rpc_refused(&run.graph, (1, 0), canceled, at);
    assert_eq!(run.violations(), [Invariant::RpcOrder]);
}
