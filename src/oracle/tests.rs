//! Unit tests of the checks in [`Oracles::observe`] and [`Oracles::finish`]: each feeds a few
//! synthetic trace events, as the model would record them, to the oracles of a tiny job built
//! as a run builds them ([`World::new`]), and asserts both the violation and its clean
//! counterpart. A check that only a long run reaches is easy to break unnoticed; these pin
//! each rule down on its own.

use super::*;
use crate::checkpoint::storage::CompletedCheckpoint;
use crate::graph::ChannelId;
use crate::trace::Retain;
use crate::world::Streaming as World;

/// The smallest job the oracles' unit tests feed events about: `src[0]` (subtask 0) →
/// `sink[0]` (subtask 1), one channel.
pub(crate) fn source_to_sink() -> ExecutionGraph {
    ExecutionGraph::build(&scenario(SOURCE_TO_SINK, "").job)
}

const SOURCE_TO_SINK: &str = r#"{"vertices": [
    {"id": "src", "operator": "source", "parallelism": 1, "records": 1},
    {"id": "sink", "operator": "sink", "parallelism": 1}],
    "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]}"#;

/// `src[0]` → `sink[0]`, a two-phase-commit sink.
const SOURCE_TO_TWO_PHASE_SINK: &str = r#"{"vertices": [
    {"id": "src", "operator": "source", "parallelism": 1, "records": 1},
    {"id": "sink", "operator": "sink", "parallelism": 1, "delivery": "two_phase_commit"}],
    "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]}"#;

/// `src[0]` → `sum[0]` (a keyed sum, subtask 1) → `sink[0]`.
const SOURCE_SUM_SINK: &str = r#"{"vertices": [
    {"id": "src", "operator": "source", "parallelism": 1, "records": 2},
    {"id": "sum", "operator": "keyed_sum", "parallelism": 1, "keys": 1},
    {"id": "sink", "operator": "sink", "parallelism": 1}],
    "edges": [{"from": "src", "to": "sum", "pattern": "all_to_all"},
              {"from": "sum", "to": "sink", "pattern": "all_to_all"}]}"#;

/// A streaming scenario of `job`, with `rest` (more top-level fields, each followed by a
/// comma) before it.
fn scenario(job: &str, rest: &str) -> crate::scenario::Scenario {
    let text = format!(r#"{{"name": "t", "mode": "streaming", {rest} "job": {job}}}"#);
    crate::scenario::parse(&text, "t").expect("valid")
}

const SRC: SubtaskId = SubtaskId(0);
const SINK: SubtaskId = SubtaskId(1);
const CHANNEL: ChannelId = ChannelId(0);
const JM: Address = Address::JobMaster;
const TM0: Address = Address::TaskManager(0);
const TM1: Address = Address::TaskManager(1);

/// A run's oracles, fed by hand: the world supplies the graph, storage and fault plan they
/// read, exactly as a run's would be.
struct Run {
    world: World,
    index: u64,
    now: Instant,
}

impl Run {
    fn new(job: &str, rest: &str) -> Run {
        Run {
            world: World::new(&scenario(job, rest), 0, Retain::Nothing),
            index: 0,
            now: Instant::ZERO,
        }
    }

    fn at(&mut self, nanos: u64) -> &mut Run {
        self.now = Instant::from_nanos(nanos);
        self
    }

    /// Records `event` now; returns its trace index.
    fn feed(&mut self, event: TraceEvent) -> u64 {
        let index = self.index;
        self.index += 1;
        let w = &mut self.world;
        w.io.oracles.observe(
            &w.graph,
            &w.io.storage,
            &w.io.faults,
            index,
            self.now,
            &event,
        );
        index
    }

    fn rpc(
        &mut self,
        from: Address,
        to: Address,
        subtask: SubtaskId,
        attempt: u32,
        call: Call,
    ) -> u64 {
        self.feed(TraceEvent::Rpc {
            from,
            to,
            sent_at: self.now,
            rpc: Rpc {
                subtask,
                attempt,
                call,
            },
        })
    }

    fn push(&mut self, seq: u64) {
        self.feed(TraceEvent::Push {
            channel: CHANNEL,
            element: Element::Record(record(SRC, seq)),
        });
    }

    fn take(&mut self, seq: u64) {
        self.feed(TraceEvent::Take {
            subtask: SINK,
            channel: CHANNEL,
            element: Element::Record(record(SRC, seq)),
        });
    }

    fn snapshot(&mut self, subtask: SubtaskId, checkpoint: u64, finished: bool) {
        self.feed(TraceEvent::Snapshot {
            subtask,
            attempt: 0,
            checkpoint,
            finished,
        });
    }

    /// Checkpoint `checkpoint` completes, recording `finished` as finished: it is put in
    /// storage and announced, as the coordinator does.
    fn complete(&mut self, checkpoint: u64, finished: &[SubtaskId]) {
        self.world.io.storage.complete(CompletedCheckpoint {
            id: checkpoint,
            completed_at: self.now,
            finished: finished.to_vec(),
        });
        self.feed(TraceEvent::CheckpointCompleted { checkpoint });
    }

    /// Every subtask not in `finished` snapshots `checkpoint` now, and it completes.
    fn checkpoint(&mut self, checkpoint: u64, finished: &[SubtaskId]) {
        for s in 0..self.world.graph.subtasks.len() as u32 {
            if !finished.contains(&SubtaskId(s)) {
                self.snapshot(SubtaskId(s), checkpoint, false);
            }
        }
        self.complete(checkpoint, finished);
    }

    fn task_state(&mut self, subtask: SubtaskId, from: ExecutionState, to: ExecutionState) {
        self.feed(TraceEvent::TaskState {
            subtask,
            attempt: 0,
            from,
            to,
        });
    }

    fn restore(&mut self, checkpoint: u64) -> u64 {
        self.feed(TraceEvent::Failover {
            cause: Some(SINK),
            restarting: 2,
            full: true,
        });
        self.feed(TraceEvent::Restore {
            checkpoint,
            restarted: 2,
            finished: 0,
            region: None,
        })
    }

    /// The violations so far: which invariant, at which trace event.
    fn violations(&self) -> Vec<(Invariant, u64)> {
        let v = &self.world.io.oracles.violations;
        v.iter().map(|v| (v.invariant, v.event_index)).collect()
    }

    fn messages(&self) -> Vec<String> {
        let v = &self.world.io.oracles.violations;
        v.iter().map(|v| v.message.clone()).collect()
    }

    /// The end-of-run judgement of a job still running, no refused RPC kept for a retry.
    fn finish(self) -> Vec<Violation> {
        let World { graph, io, .. } = self.world;
        io.oracles.finish(
            &graph,
            JobStatus::Running,
            self.now,
            self.index,
            10,
            |_, _| false,
        )
    }
}

fn record(origin: SubtaskId, seq: u64) -> Record {
    crate::record::source_record(origin, seq)
}

/// P1.7: a sink commits its transaction on a completion notice and rolls it back on an abort
/// notice, so a notice must match the checkpoint's outcome.
#[test]
fn a_notice_that_contradicts_the_checkpoints_outcome_is_a_violation() {
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.checkpoint(1, &[]);
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointComplete(1));
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointAborted(2));
    assert_eq!(run.violations(), []);
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointComplete(2));
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointAborted(1));
    let progress = Invariant::CheckpointProgress;
    assert_eq!(run.violations(), [(progress, 5), (progress, 6)]);
    let m = run.messages();
    assert!(m[0].contains("checkpoint 2 never completed"), "{}", m[0]);
    assert!(m[1].contains("checkpoint 1 completed"), "{}", m[1]);
}

/// A bug that breaks a rule on every event must not grow the violations without bound: each
/// invariant keeps its first [`MAX_KEPT_PER_INVARIANT`], the rest are counted, and another
/// invariant that breaks later is still kept.
#[test]
fn violations_past_the_cap_of_their_invariant_are_counted_not_kept() {
    let mut run = Run::new(SOURCE_TO_SINK, "");
    let violation = |invariant, event_index| Violation {
        invariant,
        time: Instant::ZERO,
        actors: Vec::new(),
        event_index,
        message: String::new(),
    };
    let extra = 5;
    let oracles = &mut run.world.io.oracles;
    for i in 0..(MAX_KEPT_PER_INVARIANT + extra) as u64 {
        oracles.violate(violation(Invariant::CheckpointProgress, i));
    }
    oracles.violate(violation(Invariant::LegalTransition, 99_999));
    assert_eq!(run.violations().len(), MAX_KEPT_PER_INVARIANT + 1);
    assert_eq!(run.world.io.oracles.unkept(), extra as u64);
    assert_eq!(run.violations()[0], (Invariant::CheckpointProgress, 0));
    assert_eq!(
        run.violations().last(),
        Some(&(Invariant::LegalTransition, 99_999)),
        "another invariant's violation is kept past the first one's cap"
    );
}

/// P1.1: the coordinator triggers no sooner than `min_pause` after its last completion; at
/// exactly `min_pause` it may. A new JobMaster's coordinator has completed nothing yet.
#[test]
fn a_trigger_sooner_than_min_pause_after_a_completion_is_a_violation() {
    let ms = 1_000_000;
    let mut run = Run::new(SOURCE_TO_SINK, r#""checkpointing": {"min_pause": "10ms"},"#);
    run.feed(TraceEvent::CheckpointTriggered { checkpoint: 1 });
    run.at(ms).checkpoint(1, &[]);
    run.at(11 * ms)
        .feed(TraceEvent::CheckpointTriggered { checkpoint: 2 });
    run.at(12 * ms).checkpoint(2, &[]);
    assert_eq!(run.violations(), []);
    let early = run
        .at(22 * ms - 1)
        .feed(TraceEvent::CheckpointTriggered { checkpoint: 3 });
    assert_eq!(run.violations(), [(Invariant::CheckpointProgress, early)]);
    run.feed(TraceEvent::JobMasterElected { incarnation: 1 });
    run.feed(TraceEvent::CheckpointTriggered { checkpoint: 4 });
    assert_eq!(run.violations().len(), 1);
}

/// `legal-transition`: the job's status and both views of an execution, the JobMaster's and
/// the task's own, follow their transition tables.
#[test]
fn an_illegal_transition_is_a_violation_in_the_job_and_in_either_view_of_an_execution() {
    use ExecutionState::{Finished, Initializing, Running};
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.feed(TraceEvent::JobStatus {
        from: JobStatus::Created,
        to: JobStatus::Running,
    });
    run.feed(TraceEvent::ExecutionState {
        subtask: SINK,
        attempt: 0,
        from: Initializing,
        to: Running,
    });
    run.task_state(SINK, Running, Finished);
    assert_eq!(run.violations(), []);
    let job = run.feed(TraceEvent::JobStatus {
        from: JobStatus::Finished,
        to: JobStatus::Running,
    });
    let view = run.feed(TraceEvent::ExecutionState {
        subtask: SINK,
        attempt: 0,
        from: Finished,
        to: Running,
    });
    let task = run.feed(TraceEvent::TaskState {
        subtask: SINK,
        attempt: 0,
        from: Finished,
        to: Running,
    });
    let legal = Invariant::LegalTransition;
    assert_eq!(
        run.violations(),
        [(legal, job), (legal, view), (legal, task)]
    );
    let m = run.messages();
    assert!(
        m[1].starts_with("the JobMaster's view of sink[0]"),
        "{}",
        m[1]
    );
    assert!(m[2].starts_with("the task sink[0]"), "{}", m[2]);
}

/// P1.6, F1.3: a task that is closing declines a checkpoint only under `flink` (F1.5 step 4);
/// any other protocol must not fail checkpoints for finishing tasks.
#[test]
fn a_decline_by_a_closing_task_is_allowed_only_under_flink() {
    let abort = TraceEvent::CheckpointAborted {
        checkpoint: 1,
        reason: AbortReason::Declined(DeclineReason::TaskClosing),
    };
    for (protocol, violated) in [("flink", false), ("option1", true), ("legacy", true)] {
        let mut run = Run::new(
            SOURCE_TO_SINK,
            &format!(r#""checkpointing": {{"finish_protocol": "{protocol}"}},"#),
        );
        run.feed(TraceEvent::CheckpointTriggered { checkpoint: 1 });
        let at = run.feed(abort);
        let expected = if violated {
            vec![(Invariant::CheckpointProgress, at)]
        } else {
            vec![]
        };
        assert_eq!(run.violations(), expected, "{protocol}");
    }
}

/// `checkpoint-progress`: a checkpoint may expire while faults are about (a lost task holds it
/// up), not once they stopped. The healed phase starts at `healed_at`: a checkpoint triggered
/// at that instant or later must not expire; one triggered before it may.
#[test]
fn a_checkpoint_may_expire_only_if_it_was_triggered_before_the_faults_healed() {
    let mut run = Run::new(
        SOURCE_TO_SINK,
        r#""faults": [{"fault": "fail_task", "task": "src[0]", "at": "5ms"}],
            "heal_at": "10ms",
            "checkpointing": {},"#,
    );
    let healed = run.world.io.faults.healed_at().expect("heal_at is set");
    let expire = |checkpoint| TraceEvent::CheckpointAborted {
        checkpoint,
        reason: AbortReason::Expired,
    };
    run.feed(TraceEvent::CheckpointTriggered { checkpoint: 1 });
    run.at(healed.as_nanos())
        .feed(TraceEvent::CheckpointTriggered { checkpoint: 2 });
    run.feed(expire(1));
    assert_eq!(run.violations(), []);
    let late = run.feed(expire(2));
    assert_eq!(run.violations(), [(Invariant::CheckpointProgress, late)]);
}

/// P1.7, F1.5 step 3: under `flink` every task, under `option1` and `option2` a
/// two-phase-commit sink, finishes only once a checkpoint holding its final state (a snapshot
/// taken after its end of input) completed; under `legacy` none waits.
#[test]
fn a_task_that_must_wait_for_its_final_checkpoint_does_not_finish_without_one() {
    use ExecutionState::{Finished, Running};
    let cases = [
        ("flink", vec![SRC, SINK]),
        ("option1", vec![SINK]),
        ("option2", vec![SINK]),
        ("legacy", vec![]),
    ];
    for (protocol, waits) in cases {
        let mut run = Run::new(
            SOURCE_TO_TWO_PHASE_SINK,
            &format!(r#""checkpointing": {{"finish_protocol": "{protocol}"}},"#),
        );
        let mut expected = Vec::new();
        for s in [SRC, SINK] {
            let at = run.index;
            run.task_state(s, Running, Finished);
            if waits.contains(&s) {
                expected.push((Invariant::CheckpointProgress, at));
            }
        }
        assert_eq!(run.violations(), expected, "{protocol}");
    }
    // A completed checkpoint with the sink's final snapshot lets it finish.
    let mut run = Run::new(
        SOURCE_TO_TWO_PHASE_SINK,
        r#""checkpointing": {"finish_protocol": "option1"},"#,
    );
    run.snapshot(SRC, 1, false);
    run.snapshot(SINK, 1, true);
    run.complete(1, &[]);
    run.task_state(SINK, Running, Finished);
    assert_eq!(run.violations(), []);
}

/// P1.2 `option2`: the coordinator counts a subtask finished once its "finishing" report
/// arrived, before it reached FINISHED; a checkpoint may record it finished from then on, but
/// not before, and not after a failover, which rebuilds that set (`consistent-cut`).
#[test]
fn option2_may_record_a_subtask_finished_from_its_report_until_a_failover() {
    let mut run = Run::new(
        SOURCE_TO_SINK,
        r#""checkpointing": {"finish_protocol": "option2"},"#,
    );
    run.checkpoint(1, &[SINK]);
    let unreported = run.index - 1;
    run.rpc(TM0, JM, SINK, 0, Call::Finishing);
    run.checkpoint(2, &[SINK]);
    assert_eq!(run.violations(), [(Invariant::ConsistentCut, unreported)]);
    run.feed(TraceEvent::Failover {
        cause: Some(SRC),
        restarting: 2,
        full: true,
    });
    run.checkpoint(3, &[SINK]);
    let after_failover = run.index - 1;
    assert_eq!(
        run.violations(),
        [
            (Invariant::ConsistentCut, unreported),
            (Invariant::ConsistentCut, after_failover)
        ]
    );
    assert!(run.messages()[1].contains("records sink[0] as finished"));
}

/// `finished-not-rerun` (P1.8, F1.6): a subtask the restored checkpoint records finished is
/// deployed finished and must never process a record again; reported once.
#[test]
fn a_subtask_recorded_finished_in_the_restored_checkpoint_must_not_take_a_record() {
    use ExecutionState::{Finished, Running};
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.push(0);
    run.take(0);
    run.task_state(SINK, Running, Finished);
    run.checkpoint(1, &[SINK]);
    run.restore(1);
    assert_eq!(run.violations(), []);
    run.push(1);
    let rerun = run.index;
    run.take(1);
    run.take(1);
    assert_eq!(run.violations(), [(Invariant::FinishedNotRerun, rerun)]);
    assert!(run.messages()[0].contains("processed record src[0]#1"));
}

/// The sources' high-water marks (what the reference evaluates, and what a restore counts as
/// replayed) count a source's own records only: a keyed sum's totals carry the sum's own id as
/// origin and are no source's.
#[test]
fn only_a_sources_own_records_count_as_emitted() {
    let mut run = Run::new(SOURCE_SUM_SINK, "");
    let sum = SubtaskId(1);
    for seq in [0, 1] {
        run.feed(TraceEvent::Push {
            channel: ChannelId(0),
            element: Element::Record(record(SRC, seq)),
        });
    }
    let total = Record {
        origin: sum,
        key: 0,
        seq: 0,
        value: 3,
    };
    run.feed(TraceEvent::Push {
        channel: ChannelId(1),
        element: Element::Record(total),
    });
    let o = &run.world.io.oracles;
    assert_eq!((o.emitted(SRC), o.emitted(sum)), (2, 0));
}

/// Unaligned (P1.4) and P1.8: checkpoint 1 holds `src` having sent 3 records and `sink` having
/// processed 1, with 2 as input channel state. A restore rewinds the channel to (3, 1) and the
/// sink replays its channel state; the next cut is consistent only if it really did.
fn unaligned_checkpoint_then_restore() -> Run {
    let mut run = Run::new(SOURCE_TO_SINK, r#""checkpointing": {"mode": "unaligned"},"#);
    for seq in 0..3 {
        run.push(seq);
    }
    run.snapshot(SRC, 1, false);
    run.take(0);
    run.feed(TraceEvent::ChannelState {
        subtask: SINK,
        checkpoint: 1,
        channel: CHANNEL,
        records: 2,
        output: false,
    });
    run.snapshot(SINK, 1, false);
    run.complete(1, &[]);
    run.take(1);
    run.take(2);
    run.restore(1);
    assert_eq!(run.violations(), []);
    run
}

#[test]
fn a_restore_rewinds_every_channel_to_the_restored_cut_channel_state_included() {
    let mut run = unaligned_checkpoint_then_restore();
    // The replay of the input channel state, then one new record.
    run.take(1);
    run.take(2);
    run.push(3);
    run.take(3);
    run.checkpoint(2, &[]);
    assert_eq!(run.violations(), []);

    // The same, but the restored sink ignores its channel state: 4 records sent before the
    // barrier, 2 processed.
    let mut run = unaligned_checkpoint_then_restore();
    run.push(3);
    run.take(3);
    run.checkpoint(2, &[]);
    let at = run.index - 1;
    assert_eq!(run.violations(), [(Invariant::ConsistentCut, at)]);
    assert!(run.messages()[0].contains(
        "the producer sent 4 records before its barrier, but the consumer's cut holds 2"
    ));
}

/// P1.8: a restore from a checkpoint that never completed is reported; the oracle holds no
/// cut for it, so channels count from nothing, never from another checkpoint's cut.
#[test]
fn a_restore_from_a_checkpoint_that_never_completed_is_reported_once() {
    let mut run = unaligned_checkpoint_then_restore();
    run.take(1);
    run.take(2);
    run.snapshot(SRC, 2, false);
    run.snapshot(SINK, 2, false);
    let restore = run.restore(2);
    run.push(3);
    run.take(3);
    run.checkpoint(3, &[]);
    assert_eq!(run.violations(), [(Invariant::ConsistentCut, restore)]);
    assert!(run.messages()[0].contains("restored from checkpoint 2, which never completed"));
}

/// Under reconciliation (P3.3) a refused RPC is owed, once however often it was refused, until
/// it is applied.
#[test]
fn a_refused_rpc_is_owed_once_until_it_is_applied() {
    let reconcile = r#""jobmaster": {"failover": "reconcile"},"#;
    let running = Call::update(ExecutionState::Running);
    let refuse = |subtask| TraceEvent::RpcRefused {
        from: TM0,
        rpc: Rpc {
            subtask,
            attempt: 0,
            call: running,
        },
    };
    for apply_both in [false, true] {
        let mut run = Run::new(SOURCE_TO_SINK, reconcile);
        run.feed(refuse(SRC));
        run.feed(refuse(SRC));
        let refused = run.feed(refuse(SINK));
        run.rpc(TM0, JM, SRC, 0, running);
        if apply_both {
            run.rpc(TM0, JM, SINK, 0, running);
        }
        assert_eq!(run.violations(), []);
        let v = run.finish();
        if apply_both {
            assert_eq!(v, []);
        } else {
            assert_eq!(v.len(), 1);
            assert_eq!(
                (v[0].invariant, v[0].event_index),
                (Invariant::NoLostRpc, refused)
            );
            assert!(
                v[0].message.contains("about sink[0] attempt 0"),
                "{}",
                v[0].message
            );
        }
    }
}

/// P3.3: what a lost TaskManager kept dies with it, and what an attempt owed is moot once the
/// attempt is replaced; nothing else is forgiven.
#[test]
fn a_lost_taskmanager_or_a_replaced_attempt_owes_nothing_more() {
    let running = Call::update(ExecutionState::Running);
    let mut run = Run::new(
        SOURCE_TO_SINK,
        r#""cluster": {"task_managers": 2}, "jobmaster": {"failover": "reconcile"},"#,
    );
    let refuse = |from, subtask| TraceEvent::RpcRefused {
        from,
        rpc: Rpc {
            subtask,
            attempt: 0,
            call: running,
        },
    };
    run.feed(refuse(TM1, SRC));
    run.feed(refuse(TM0, SINK));
    let owed = run.feed(refuse(TM0, SRC));
    run.feed(TraceEvent::TaskManagerLost { task_manager: 1 });
    // The sink's attempt 0 is replaced; the source's is not.
    run.feed(TraceEvent::ExecutionState {
        subtask: SINK,
        attempt: 1,
        from: ExecutionState::Created,
        to: ExecutionState::Scheduled,
    });
    let v = run.finish();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(
        (v[0].invariant, v[0].event_index),
        (Invariant::NoLostRpc, owed)
    );
    assert_eq!(v[0].actors, ["TaskManager0", "JobMaster"]);
    assert!(
        v[0].message.contains("about src[0] attempt 0"),
        "{}",
        v[0].message
    );
}

/// P3.1: a TaskManager's report to a new JobMaster names every task it hosts that finished
/// within the retention, or that work runs again (`finished-not-rerun`). A task whose
/// TaskManager died since is hosted nowhere: the replacement process owes no report of it.
#[test]
fn a_report_that_omits_a_task_finished_within_the_retention_is_a_rerun() {
    use ExecutionState::{Finished, Running};
    for report_sink in [false, true] {
        let mut run = Run::new(
            SOURCE_TO_SINK,
            r#""cluster": {"task_managers": 2},
                "jobmaster": {"failover": "reconcile", "terminal_state_retention": "10ms"},"#,
        );
        run.rpc(
            JM,
            TM1,
            SRC,
            0,
            Call::SubmitTask(crate::trace::Restore::FRESH),
        );
        run.rpc(
            JM,
            TM0,
            SINK,
            0,
            Call::SubmitTask(crate::trace::Restore::FRESH),
        );
        run.task_state(SRC, Running, Finished);
        run.task_state(SINK, Running, Finished);
        run.feed(TraceEvent::TaskManagerLost { task_manager: 1 });
        run.at(1_000_000)
            .feed(TraceEvent::JobMasterElected { incarnation: 1 });
        run.rpc(TM1, JM, SINK, 0, Call::ReportDone);
        if report_sink {
            run.rpc(
                TM0,
                JM,
                SINK,
                0,
                Call::ReportExecution {
                    state: Finished,
                    parallelism: 1,
                },
            );
        }
        let done = run.index;
        run.rpc(TM0, JM, SINK, 0, Call::ReportDone);
        let expected = if report_sink {
            vec![]
        } else {
            vec![(Invariant::FinishedNotRerun, done)]
        };
        assert_eq!(run.violations(), expected, "reported: {report_sink}");
    }
}

/// `src[0]` feeds the sink `a` directly and the sink `b` through a map (which adds 1 to a
/// record's value): the same source record is expected at `a` as it is, at `b` mapped.
const SOURCE_TO_TWO_SINKS: &str = r#"{"vertices": [
    {"id": "src", "operator": "source", "parallelism": 1, "records": 2},
    {"id": "a", "operator": "sink", "parallelism": 1},
    {"id": "map", "operator": "map", "parallelism": 1},
    {"id": "b", "operator": "sink", "parallelism": 1}],
    "edges": [{"from": "src", "to": "a", "pattern": "all_to_all"},
              {"from": "src", "to": "map", "pattern": "all_to_all"},
              {"from": "map", "to": "b", "pattern": "all_to_all"}]}"#;

/// A run of [`SOURCE_TO_TWO_SINKS`] in which `src` emitted its record 0 (only), a failover
/// first if `failover`; then the sinks receive `received` (sink subtask, record) in order.
/// Returns the end-of-run judgement of `exactly-once-output`.
fn output(failover: bool, received: &[(u32, Record)]) -> Vec<Violation> {
    let mut run = Run::new(SOURCE_TO_TWO_SINKS, "");
    let (a, b) = (SubtaskId(1), SubtaskId(3));
    assert_eq!(run.world.graph.subtask_name(b).to_string(), "b[0]");
    let channel = |run: &Run, to: SubtaskId| {
        let channels = &run.world.graph.channels;
        ChannelId(channels.iter().position(|c| c.to == to).expect("an input") as u32)
    };
    for to in [a, SubtaskId(2)] {
        let channel = channel(&run, to);
        run.feed(TraceEvent::Push {
            channel,
            element: Element::Record(record(SRC, 0)),
        });
    }
    if failover {
        run.feed(TraceEvent::Failover {
            cause: Some(SRC),
            restarting: 4,
            full: true,
        });
    }
    for &(sink, r) in received {
        let subtask = SubtaskId(sink);
        let channel = channel(&run, subtask);
        run.feed(TraceEvent::Take {
            subtask,
            channel,
            element: Element::Record(r),
        });
    }
    run.finish()
}

/// `exactly-once-output` (P4): each sink holds every record of a failure-free run once, and
/// nothing else; an at-least-once sink may repeat one after a failover, but never receive one
/// no failure-free run produces. A record the reference expects elsewhere (at another sink, or
/// at an earlier position) is still unexpected here, not a repeat. One violation stands for all
/// output problems and says how many there were.
#[test]
fn the_output_check_tells_a_repeat_from_a_record_no_failure_free_run_produces() {
    let r0 = record(SRC, 0);
    let mapped = Record {
        value: r0.value.wrapping_add(1),
        ..r0
    };
    let describe = |r: Record| {
        let graph = source_to_sink();
        describe_record(&graph, &r)
    };
    assert_eq!(
        describe(r0),
        format!("record src[0]#0 (key {}, value {})", r0.key, r0.value)
    );
    // Clean: what a failure-free run produces, then repeated after a failover.
    assert_eq!(output(false, &[(1, r0), (3, mapped)]), []);
    assert_eq!(
        output(true, &[(1, r0), (1, r0), (3, mapped), (3, mapped)]),
        []
    );

    let only = |v: Vec<Violation>| {
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].invariant, Invariant::ExactlyOnceOutput);
        v[0].message.clone()
    };
    // A repeat without a failover, the last record of all in the order compared (the last
    // sink's greatest).
    let m = only(output(false, &[(1, r0), (3, mapped), (3, mapped)]));
    assert_eq!(
        m,
        format!("sink b received {} more than once", describe(mapped))
    );
    // After a failover: a record src never emitted, after one it did.
    let r1 = record(SRC, 1);
    let m = only(output(true, &[(1, r0), (1, r1)]));
    assert_eq!(
        m,
        format!(
            "sink a received {} although a failure-free run does not produce it",
            describe(r1)
        )
    );
    // After a failover: at `b`, the record `a` expects, unmapped.
    let m = only(output(true, &[(1, r0), (3, r0)]));
    assert_eq!(
        m,
        format!(
            "sink b received {} although a failure-free run does not produce it",
            describe(r0)
        )
    );
    // Two problems: the first, and how many in all.
    let m = only(output(false, &[(1, r0), (1, r0), (1, r1)]));
    assert!(
        m.ends_with("more than once (2 output problems in all)"),
        "{m}"
    );
}

/// P3.3: a reconciling JobMaster applies reports and nothing else; once the window ends
/// (RECONCILING → RUNNING) the kept RPCs are applied as usual.
#[test]
fn a_reconciling_jobmaster_applies_only_reports() {
    let reconcile = r#""jobmaster": {"failover": "reconcile"},"#;
    let running = Call::update(ExecutionState::Running);
    let mut run = Run::new(SOURCE_TO_SINK, reconcile);
    run.feed(TraceEvent::JobStatus {
        from: JobStatus::Created,
        to: JobStatus::Reconciling,
    });
    run.rpc(
        TM0,
        JM,
        SRC,
        0,
        Call::ReportExecution {
            state: ExecutionState::Running,
            parallelism: 1,
        },
    );
    assert_eq!(run.violations(), []);
    let applied = run.rpc(TM0, JM, SRC, 0, running);
    assert_eq!(run.violations(), [(Invariant::NoLostRpc, applied)]);
    let mut run = Run::new(SOURCE_TO_SINK, reconcile);
    for (from, to) in [
        (JobStatus::Created, JobStatus::Reconciling),
        (JobStatus::Reconciling, JobStatus::Running),
    ] {
        run.feed(TraceEvent::JobStatus { from, to });
    }
    run.rpc(TM0, JM, SRC, 0, running);
    assert_eq!(run.violations(), []);
}

/// P1.3: one attempt snapshots each checkpoint once and in order; a new attempt starts over.
#[test]
fn an_attempt_snapshots_each_checkpoint_once_and_in_order() {
    let snapshot = |attempt, checkpoint| TraceEvent::Snapshot {
        subtask: SRC,
        attempt,
        checkpoint,
        finished: false,
    };
    // After checkpoint 2: a later one is fine, the same one again or an older one is not.
    for (second, bad) in [(3, false), (2, true), (1, true)] {
        let mut run = Run::new(SOURCE_TO_SINK, "");
        run.feed(snapshot(0, 2));
        let i = run.feed(snapshot(0, second));
        if bad {
            assert_eq!(run.violations(), [(Invariant::ConsistentCut, i)]);
        } else {
            assert_eq!(run.violations(), []);
        }
    }
    // A restored attempt may snapshot a checkpoint id below its predecessor's last one.
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.feed(snapshot(0, 3));
    run.feed(snapshot(1, 2));
    assert_eq!(run.violations(), []);
}

/// F1.6 with `job-status`: a job whose submitted checkpoint must be refused is FAILED by that
/// refusal, not by its faults; a job whose checkpoint is accepted is judged as any other (a
/// FAILED end that no fault explains is a violation).
#[test]
fn only_a_refused_restore_excuses_a_failed_job() {
    let restore = |finished: &str| {
        format!(
            r#""restore_from": {{"checkpoint": 3, "operators": {{"sink": {{"parallelism": 1, "finished": [{finished}]}}}}}},"#
        )
    };
    let failed = |rest: &str| {
        let mut run = Run::new(SOURCE_TO_SINK, rest);
        run.feed(TraceEvent::JobStatus {
            from: JobStatus::Created,
            to: JobStatus::Failed,
        });
        let World { graph, io, .. } = run.world;
        let found = io
            .oracles
            .finish(&graph, JobStatus::Failed, run.now, run.index, 10, |_, _| {
                false
            });
        found.iter().map(|v| v.invariant).collect::<Vec<_>>()
    };
    // The sink finished behind a running source: refused (and never rejected here).
    assert!(!failed(&restore("true")).contains(&Invariant::JobStatus));
    assert!(failed(&restore("false")).contains(&Invariant::JobStatus));
}

/// F1.7 step 6, F1.10 step 2: an attempt told that a checkpoint was aborted never snapshots it
/// afterwards; a snapshot taken before the notice, another checkpoint and another attempt are
/// free.
#[test]
fn an_attempt_snapshots_no_checkpoint_it_was_told_is_aborted() {
    let snapshot = |attempt, checkpoint| TraceEvent::Snapshot {
        subtask: SINK,
        attempt,
        checkpoint,
        finished: false,
    };
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.feed(snapshot(0, 1));
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointAborted(1)); // after: its upload, F1.8
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointAborted(3));
    run.feed(snapshot(0, 2));
    run.feed(snapshot(1, 3)); // a new attempt was told nothing
    assert_eq!(run.violations(), []);
    let mut run = Run::new(SOURCE_TO_SINK, "");
    run.rpc(JM, TM0, SINK, 0, Call::NotifyCheckpointAborted(3));
    let i = run.feed(snapshot(0, 3));
    assert_eq!(run.violations(), [(Invariant::ConsistentCut, i)]);
    assert!(
        run.messages()[0].contains("after it was told"),
        "{:?}",
        run.messages()
    );
}

/// The records' short path through [`Oracles::observe`] (taken when no oracle that watches
/// records beyond the counts is on) judges exactly as the full path: the same violations as
/// they happen (`trigger-at-once`, `finished-not-rerun`) and the same end-of-run judgement.
#[test]
fn the_records_short_path_judges_as_the_full_path() {
    use ExecutionState::{Finished, Running};
    let judge = |short: bool| {
        let flink = r#""checkpointing": {"interval": "1s", "finish_protocol": "flink"},"#;
        let mut run = Run::new(SOURCE_TO_SINK, flink);
        let oracles = &mut run.world.io.oracles;
        assert!(oracles.plain_records && oracles.trigger_at_once.is_some());
        oracles.plain_records = short;
        for seq in 0..4 {
            run.push(seq);
            run.feed(TraceEvent::Arrive {
                channel: CHANNEL,
                element: Element::Record(record(SRC, seq)),
            });
        }
        run.take(0);
        run.feed(TraceEvent::CheckpointSeen {
            subtask: SINK,
            checkpoint: 1,
            by_trigger: true,
        });
        run.take(1);
        run.take(1);
        run.task_state(SINK, Running, Finished);
        run.checkpoint(1, &[SINK]);
        run.restore(1);
        run.push(4);
        run.take(2);
        let during = run.violations();
        let invariants: Vec<Invariant> = during.iter().map(|v| v.0).collect();
        assert!(invariants.contains(&Invariant::TriggerAtOnce), "{during:?}");
        assert!(
            invariants.contains(&Invariant::FinishedNotRerun),
            "{during:?}"
        );
        let emitted = run.world.io.oracles.emitted(SRC);
        (during, emitted, run.finish())
    };
    assert_eq!(judge(true), judge(false));
}

/// F1.14 steps 10 and 12: a network buffer, or a committed transaction, shown to the oracles
/// in one call (`observe_buffer`, on the records' short path or the full one) is judged
/// exactly as its records shown one by one at the buffer event's index: the same violations
/// as they happen (`trigger-at-once`, `finished-not-rerun`), the same counts and the same
/// end-of-run judgement.
#[test]
fn a_buffer_is_judged_as_its_records_one_by_one() {
    use ExecutionState::{Finished, Running};
    #[derive(Clone, Copy, PartialEq)]
    enum Feed {
        PerRecord,
        Buffer { short: bool },
    }
    let judge = |feed: Feed| {
        let flink = r#""checkpointing": {"interval": "1s", "finish_protocol": "flink"},"#;
        let mut run = Run::new(SOURCE_TO_SINK, flink);
        if let Feed::Buffer { short } = feed {
            run.world.io.oracles.plain_records = short;
        }
        let buffer = |run: &mut Run, event: TraceEvent, seqs: std::ops::Range<u64>| {
            let records: Vec<Record> = seqs.map(|seq| record(SRC, seq)).collect();
            let as_event = |r: Record| match event {
                TraceEvent::BufferSent { channel, .. } => TraceEvent::Push {
                    channel,
                    element: Element::Record(r),
                },
                TraceEvent::BufferArrived { channel, .. } => TraceEvent::Arrive {
                    channel,
                    element: Element::Record(r),
                },
                TraceEvent::BufferTaken {
                    subtask, channel, ..
                } => TraceEvent::Take {
                    subtask,
                    channel,
                    element: Element::Record(r),
                },
                TraceEvent::TransactionCommitted {
                    subtask,
                    checkpoint,
                    ..
                } => TraceEvent::Commit {
                    subtask,
                    checkpoint,
                    record: r,
                },
                other => unreachable!("{other:?}"),
            };
            let index = run.index;
            run.index += 1;
            let w = &mut run.world;
            let (graph, io) = (&w.graph, &mut w.io);
            match feed {
                Feed::PerRecord => {
                    for &r in &records {
                        let e = as_event(r);
                        io.oracles
                            .observe(graph, &io.storage, &io.faults, index, run.now, &e);
                    }
                }
                Feed::Buffer { .. } => io.oracles.observe_buffer(
                    graph,
                    &io.storage,
                    &io.faults,
                    index,
                    run.now,
                    &event,
                    &records,
                    &as_event,
                ),
            }
        };
        let sent = |records| TraceEvent::BufferSent {
            channel: CHANNEL,
            records,
            digest: 0,
        };
        let taken = |records| TraceEvent::BufferTaken {
            subtask: SINK,
            channel: CHANNEL,
            records,
            digest: 0,
        };
        buffer(&mut run, sent(4), 0..4);
        let arrived = TraceEvent::BufferArrived {
            channel: CHANNEL,
            records: 4,
        };
        buffer(&mut run, arrived, 0..4);
        buffer(&mut run, taken(1), 0..1);
        run.feed(TraceEvent::CheckpointSeen {
            subtask: SINK,
            checkpoint: 1,
            by_trigger: true,
        });
        buffer(&mut run, taken(2), 1..3);
        run.task_state(SINK, Running, Finished);
        run.checkpoint(1, &[SINK]);
        run.restore(1);
        buffer(&mut run, sent(1), 4..5);
        buffer(&mut run, taken(1), 3..4);
        let committed = TraceEvent::TransactionCommitted {
            subtask: SINK,
            checkpoint: 1,
            records: 3,
            digest: Some(0),
        };
        buffer(&mut run, committed, 1..4);
        let during = run.violations();
        let invariants: Vec<Invariant> = during.iter().map(|v| v.0).collect();
        assert!(invariants.contains(&Invariant::TriggerAtOnce), "{during:?}");
        assert!(
            invariants.contains(&Invariant::FinishedNotRerun),
            "{during:?}"
        );
        let emitted = run.world.io.oracles.emitted(SRC);
        (during, emitted, run.finish())
    };
    let per_record = judge(Feed::PerRecord);
    assert_eq!(judge(Feed::Buffer { short: true }), per_record);
    assert_eq!(judge(Feed::Buffer { short: false }), per_record);
}
