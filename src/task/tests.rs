//! Task-level checks on shipped scenarios.

use crate::run::{run, RunOptions, RunReport};
use crate::status::ExecutionState;
use crate::trace::{Call, DeclineReason, Retain, TraceEvent};
use std::collections::{BTreeMap, BTreeSet};

fn run_file(name: &str) -> RunReport {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    let scenario = crate::scenario::load(&path).expect("a shipped scenario");
    run(
        &scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Everything,
            eager_sources: false,
        },
    )
}

/// `learn_of`: an attempt learns of each checkpoint once, newer than any it knew, and
/// snapshots it at most once. In both scenarios triggers reach a source after its finishing
/// report and before the answer that lists their checkpoints as pending (one in
/// `trigger-races-finish-option2`, two in `finishing-answer-after-two-triggers-option2`):
/// the answer must not make it take one again (P1.2 option2: the task performs the pending
/// checkpoints it has not joined yet).
#[test]
fn an_attempt_learns_of_and_snapshots_each_checkpoint_once() {
    for file in [
        "trigger-races-finish-option2.json",
        "finishing-answer-after-two-triggers-option2.json",
    ] {
        learns_of_and_snapshots_each_checkpoint_once(file);
    }
}

/// F1.7 step 2: at least once, a barrier of a checkpoint that is not pending and not newer
/// than any the task knew is ignored; it starts nothing. In
/// `at-least-once-trigger-drops-older-pending` v1[0]'s held channel delivers barrier 2 after
/// the trigger RPC of 5 completed 5 at once (and dropped 2).
#[test]
fn at_least_once_an_attempt_learns_of_each_checkpoint_once() {
    for file in [
        "at-least-once-trigger-drops-older-pending.json",
        "at-least-once-join-keeps-processing.json",
    ] {
        learns_of_and_snapshots_each_checkpoint_once(file);
    }
}

fn learns_of_and_snapshots_each_checkpoint_once(file: &str) {
    let report = run_file(file);
    let mut attempt = BTreeMap::new();
    let mut latest: BTreeMap<_, u64> = BTreeMap::new();
    let mut snapshots = BTreeSet::new();
    for (_, _, event) in report.trace.kept() {
        match *event {
            TraceEvent::TaskState {
                subtask,
                attempt: a,
                ..
            } => {
                // A new attempt knows of no checkpoint yet.
                let previous = attempt.insert(subtask, a);
                if previous != Some(a) {
                    latest.remove(&subtask);
                }
            }
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                ..
            } => {
                let before = latest.insert(subtask, checkpoint).unwrap_or(0);
                assert!(
                    checkpoint > before,
                    "{file}: {} learned of checkpoint {checkpoint} after {before}",
                    report.graph.subtask_name(subtask)
                );
            }
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                ..
            } => assert!(
                snapshots.insert((subtask, attempt, checkpoint)),
                "{file}: {} attempt {attempt} took checkpoint {checkpoint} twice",
                report.graph.subtask_name(subtask)
            ),
            _ => {}
        }
    }
    assert!(!snapshots.is_empty());
}

/// Once an attempt is told that checkpoint `m` was aborted, it takes no part in `m`: the
/// notice can overtake `m`'s barriers (RPC against data path), which are then stale, also
/// after the attempt learned of an older checkpoint still pending. In
/// `abort-overtakes-older-barrier` v1[0] hears of the abort of 9 before barrier 8 arrives.
#[test]
fn an_attempt_takes_no_part_in_a_checkpoint_it_was_told_is_aborted() {
    use crate::trace::Address;
    for file in [
        "abort-overtakes-older-barrier.json",
        "abort-overtakes-barrier-after-failover.json",
    ] {
        let report = run_file(file);
        let mut attempt = BTreeMap::new();
        let mut aborted = BTreeSet::new();
        for (_, _, event) in report.trace.kept() {
            let late = match *event {
                TraceEvent::TaskState {
                    subtask,
                    attempt: a,
                    ..
                } => {
                    attempt.insert(subtask, a);
                    None
                }
                TraceEvent::Rpc {
                    to: Address::TaskManager(_),
                    rpc,
                    ..
                } => {
                    if let Call::NotifyCheckpointAborted(m) = rpc.call {
                        aborted.insert((rpc.subtask, rpc.attempt, m));
                    }
                    None
                }
                TraceEvent::CheckpointSeen {
                    subtask,
                    checkpoint,
                    ..
                } => Some((subtask, attempt[&subtask], checkpoint)),
                TraceEvent::Snapshot {
                    subtask,
                    attempt,
                    checkpoint,
                    ..
                } => Some((subtask, attempt, checkpoint)),
                _ => None,
            };
            if let Some((subtask, a, m)) = late {
                assert!(
                    !aborted.contains(&(subtask, a, m)),
                    "{file}: {} attempt {a} took part in checkpoint {m} after its abort",
                    report.graph.subtask_name(subtask)
                );
            }
        }
        assert!(!aborted.is_empty(), "{file}: no abort notice");
    }
}

/// A task that dies with its TaskManager records its own end (RUNNING → FAILED), although
/// nobody is left to report it: oracles, `explain` and `view` read the task's own state
/// from the trace.
#[test]
fn a_task_lost_with_its_task_manager_records_that_it_failed() {
    let report = run_file("failover-taskmanager-lost-during-alignment.json");
    let lost: Vec<String> = report
        .trace
        .kept()
        .iter()
        .filter_map(|(_, _, event)| match *event {
            TraceEvent::TaskState {
                subtask,
                from: ExecutionState::Running,
                to: ExecutionState::Failed,
                ..
            } => Some(report.graph.subtask_name(subtask).to_string()),
            _ => None,
        })
        .collect();
    // TaskManager1 hosts src[1] and sum[1]; nothing else fails.
    assert_eq!(lost, ["src[1]", "sum[1]"]);
}

/// Every decline an attempt sent that reached the JobMaster, in order: subtask name,
/// checkpoint, reason.
fn declines(report: &RunReport) -> Vec<(String, u64, DeclineReason)> {
    report
        .trace
        .kept()
        .iter()
        .filter_map(|(_, _, event)| match *event {
            TraceEvent::Rpc { rpc, .. } => match rpc.call {
                Call::DeclineCheckpoint { checkpoint, reason } => Some((
                    report.graph.subtask_name(rpc.subtask).to_string(),
                    checkpoint,
                    reason,
                )),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// F1.10: mid[0]'s marker for checkpoint 1 aborts it at relay[0], which is aligning it (or,
/// at least once, counting it), and at sink[0], which has not heard of it (the marker is
/// newer than any checkpoint it knew): each declines 1 once, on the cancellation barrier, and
/// learns of it once.
#[test]
fn a_cancel_marker_aborts_its_checkpoint_once_at_each_task_downstream() {
    for file in [
        "cancel-marker-after-end-of-partition-legacy.json",
        "cancel-marker-at-least-once-legacy.json",
    ] {
        learns_of_and_snapshots_each_checkpoint_once(file);
        let report = run_file(file);
        let on_marker: Vec<(String, u64)> = declines(&report)
            .into_iter()
            .filter(|d| d.2 == DeclineReason::OnCancellationBarrier)
            .map(|(name, n, _)| (name, n))
            .collect();
        assert_eq!(
            on_marker,
            [("relay[0]".to_owned(), 1), ("sink[0]".to_owned(), 1)],
            "{file}: {:?}",
            declines(&report)
        );
    }
}

/// What happened at `task` around checkpoint `n`, in order: the abort notice reaching it, the
/// barriers and markers of `n` it took and pushed (with their channels), and its snapshot.
fn story(report: &RunReport, task: &str, n: u64) -> Vec<String> {
    use crate::record::Element;
    use crate::trace::Address;
    let is = |s| report.graph.subtask_name(s).to_string() == task;
    let of_n = |e: Element| matches!(e, Element::Barrier(c) | Element::CancelMarker(c) if c == n);
    let name = |c| report.graph.channel_name(c).to_string();
    report
        .trace
        .kept()
        .iter()
        .filter_map(|(_, _, event)| match *event {
            TraceEvent::Rpc {
                to: Address::TaskManager(_),
                rpc,
                ..
            } if is(rpc.subtask) && rpc.call == Call::NotifyCheckpointAborted(n) => {
                Some("notice".to_owned())
            }
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } if is(subtask) && of_n(element) => {
                Some(format!("take {element:?} {}", name(channel)))
            }
            TraceEvent::Push { channel, element }
                if is(report.graph.channels[channel.index()].from) && of_n(element) =>
            {
                Some(format!("push {element:?} {}", name(channel)))
            }
            // P1.4: an unaligned barrier is acted on as it arrives, never taken.
            TraceEvent::Arrive {
                channel,
                element: Element::PriorityBarrier(c),
            } if is(report.graph.channels[channel.index()].to) && c == n => {
                Some(format!("arrive PriorityBarrier({c}) {}", name(channel)))
            }
            TraceEvent::Snapshot {
                subtask,
                checkpoint,
                ..
            } if is(subtask) && checkpoint == n => Some("snapshot".to_owned()),
            _ => None,
        })
        .collect()
}

/// F1.10: a barrier of a checkpoint whose abort the task was told of first is stale, and the
/// task sends a cancellation marker for it on every output. In
/// `cancel-marker-abort-overtakes-barrier` the notice that 9 is aborted reaches v0[0] before
/// barrier 9, which comes from a source and so from no marker.
#[test]
fn a_barrier_after_its_abort_notice_sends_a_cancel_marker_on() {
    let file = "cancel-marker-abort-overtakes-barrier.json";
    learns_of_and_snapshots_each_checkpoint_once(file);
    assert_eq!(
        story(&run_file(file), "v0[0]", 9),
        [
            "notice",
            "take Barrier(9) src0[0]->v0[0]",
            "push CancelMarker(9) v0[0]->v1[0]",
            "push CancelMarker(9) v0[0]->v2[0]",
            "push CancelMarker(9) v0[0]->v3[0]",
            "push CancelMarker(9) v0[0]->v3[1]"
        ]
    );
}

/// F1.10 step 2 with unaligned barriers: an unaligned barrier of a checkpoint the task was told
/// is aborted sends a marker on, as an aligned one does. In
/// `cancel-marker-abort-overtakes-unaligned-barrier` the notice that 1 is aborted reaches v0[0]
/// 3 ms before unaligned barrier 1, which comes on a slow channel from the source.
#[test]
fn an_unaligned_barrier_after_its_abort_notice_sends_a_cancel_marker_on() {
    let file = "cancel-marker-abort-overtakes-unaligned-barrier.json";
    learns_of_and_snapshots_each_checkpoint_once(file);
    assert_eq!(
        story(&run_file(file), "v0[0]", 1),
        [
            "notice",
            "arrive PriorityBarrier(1) src0[0]->v0[0]",
            "push CancelMarker(1) v0[0]->sink0[0]",
            "push CancelMarker(1) v0[0]->sink0[1]",
            "push CancelMarker(1) v0[0]->sink0[2]"
        ]
    );
}

/// F1.10: the abort notice of the checkpoint a task is aligning ends the alignment and sends a
/// marker on; a barrier of that checkpoint that comes afterwards is stale and sends no second
/// one. In `cancel-marker-hold-channel-expires-checkpoint` map[0] aligns 1, is told that 1
/// expired, and then takes the held channel's barrier 1.
#[test]
fn a_barrier_after_the_abort_of_its_alignment_sends_no_second_marker() {
    use crate::record::Element;
    let file = "cancel-marker-hold-channel-expires-checkpoint.json";
    learns_of_and_snapshots_each_checkpoint_once(file);
    let report = run_file(file);
    let markers: Vec<String> = report
        .trace
        .kept()
        .iter()
        .filter_map(|(_, _, event)| match *event {
            TraceEvent::Push {
                channel,
                element: Element::CancelMarker(1),
            } => Some(report.graph.channel_name(channel).to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(markers, ["map[0]->sink[0]"]);
}

/// F1.8: an abort notice cancels the checkpoint's running upload, and only that one; when it
/// was the last one a finishing task waited for, the task finishes at the notice. In
/// `async-snapshot-abort-cancels-upload` src[0] uploads its snapshots of 1 and 2 when both
/// expire: the notice of 1 cancels 1's upload, the notice of 2 the last one.
#[test]
fn an_abort_notice_cancels_its_checkpoints_upload() {
    use crate::trace::Address;
    let report = run_file("async-snapshot-abort-cancels-upload.json");
    let src0 = |s| report.graph.subtask_name(s).to_string() == "src[0]";
    let mut story = Vec::new();
    for (_, at, event) in report.trace.kept() {
        match *event {
            TraceEvent::Rpc {
                to: Address::TaskManager(_),
                rpc,
                ..
            } if src0(rpc.subtask) => {
                if let Call::NotifyCheckpointAborted(n) = rpc.call {
                    story.push(format!("{at} aborted {n}"));
                }
            }
            TraceEvent::SnapshotUploaded {
                subtask,
                checkpoint,
                ..
            } if src0(subtask) => story.push(format!("{at} uploaded {checkpoint}")),
            TraceEvent::TaskState {
                subtask,
                to: ExecutionState::Finished,
                ..
            } if src0(subtask) => story.push(format!("{at} finished")),
            _ => {}
        }
    }
    assert_eq!(
        story,
        ["7.3ms aborted 1", "7.6ms aborted 2", "7.6ms finished"]
    );
}

/// F1.7 step 6: at least once, the abort notice of a checkpoint whose barriers the task is
/// still counting does not end the count, but when it completes the task sends a cancellation
/// marker instead of snapshotting. In `at-least-once-abort-notice-before-last-barrier` map[0]
/// counts src[0]'s barrier 1, is told that 1 expired, and then takes the held barrier 1.
#[test]
fn at_least_once_a_count_aborted_by_notice_ends_in_a_marker_not_a_snapshot() {
    let file = "at-least-once-abort-notice-before-last-barrier.json";
    learns_of_and_snapshots_each_checkpoint_once(file);
    let report = run_file(file);
    // No snapshot of 1: a marker instead.
    assert_eq!(
        story(&report, "map[0]", 1),
        [
            "take Barrier(1) src[0]->map[0]",
            "notice",
            "take Barrier(1) src[1]->map[0]",
            "push CancelMarker(1) map[0]->sink[0]"
        ]
    );
    assert!(
        !declines(&report)
            .iter()
            .any(|(name, n, _)| name == "map[0]" && *n == 1),
        "the notice's checkpoint is not declined: {:?}",
        declines(&report)
    );
}

/// F1.14 step 9: a consumer takes a network buffer's records in one step, and is then busy for
/// all of them. In `buffers-aligned-small` the map (200 µs a record) is slower than its
/// source, so its input holds full buffers of 4 records: it takes each one whole at one
/// instant, and takes nothing more before the buffer's processing time has passed.
#[test]
fn a_consumer_takes_a_buffer_in_one_step_and_is_busy_for_all_of_it() {
    use crate::record::Element;
    let report = run_file("buffers-aligned-small.json");
    let map = |s| report.graph.subtask_name(s).to_string() == "map[0]";
    let mut groups: Vec<(sim::Instant, u64)> = Vec::new();
    for &(_, at, event) in report.trace.kept() {
        if let TraceEvent::Take {
            subtask,
            element: Element::Record(_),
            ..
        } = event
        {
            if !map(subtask) {
                continue;
            }
            match groups.last_mut() {
                Some((t, n)) if *t == at => *n += 1,
                _ => groups.push((at, 1)),
            }
        }
    }
    assert_eq!(groups.iter().map(|g| g.1).sum::<u64>(), 600, "every record");
    assert!(
        groups.iter().all(|g| g.1 <= 4),
        "never more than one buffer a step"
    );
    let whole = groups.iter().filter(|g| g.1 == 4).count();
    assert!(
        whole > 100,
        "back-pressured, most steps take a full buffer: {whole}"
    );
    for pair in groups.windows(2) {
        let ((t0, n), (t1, _)) = (pair[0], pair[1]);
        assert!(
            t1 - t0 >= sim::Duration::from_micros(200 * n),
            "the next take at {t1} comes after {n} records of 200us from {t0}"
        );
    }
}

/// F1.14 step 6: the summary's count of the buffers that hold channel state. In
/// `buffers-draining-task-holds-end-of-partition` a buffer holds one record, so each
/// checkpoint's state takes as many buffers as records, on either side. In
/// `buffers-unaligned-small` (4 records a buffer) and `-large` (32) checkpoint 1 persists 40
/// and 272 input records in 10 buffers, and 5 and 33 output records in 2: at least the full
/// buffers the records need, and partly taken or partly filled ones counted whole.
#[test]
fn channel_state_counts_the_buffers_that_hold_it() {
    let report = run_file("buffers-draining-task-holds-end-of-partition.json");
    let checkpoints = &report.checkpoints;
    let with_state = checkpoints.iter().filter(|c| c.input_state_records > 0);
    assert!(with_state.count() >= 8);
    for c in checkpoints {
        assert_eq!(c.input_state_buffers, c.input_state_records, "{}", c.id);
        assert_eq!(c.output_state_buffers, c.output_state_records, "{}", c.id);
    }
    for (file, records, buffers) in [
        ("buffers-unaligned-small.json", (40, 5), (10, 2)),
        ("buffers-unaligned-large.json", (272, 33), (10, 2)),
    ] {
        let report = run_file(file);
        let c = &report.checkpoints[0];
        assert_eq!((c.input_state_records, c.output_state_records), records);
        assert_eq!((c.input_state_buffers, c.output_state_buffers), buffers);
    }
}
