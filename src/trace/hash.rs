//! The trace hash's input: every event as a fixed sequence of 64-bit words. Changing a word
//! here changes every recorded hash, so this file is part of the trace format
//! (`FORMAT_VERSION`). Batch events (tags from 100 on) always write five words, padded with 0.

use super::{AbortReason, Address, Call, FaultEvent, Logged, TraceEvent};
use crate::graph::{ChannelId, SubtaskId};
use crate::record::{Element, StopMode};
use sim::TraceHasher;

impl TraceEvent {
    /// Feeds the event into the trace hash as a fixed sequence of 64-bit words: a tag, then
    /// every field in declaration order. Changing this changes every recorded hash, so it is
    /// part of the trace format (`FORMAT_VERSION`).
    pub(super) fn hash_into(&self, h: &mut TraceHasher) {
        let id = |s: SubtaskId| u64::from(s.0);
        let ch = |c: ChannelId| u64::from(c.0);
        let opt = |x: Option<u32>| x.map_or(u64::MAX, u64::from);
        match *self {
            TraceEvent::JobStatus { from, to } => words(h, 1, &[from as u64, to as u64]),
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            } => words(
                h,
                2,
                &[id(subtask), u64::from(attempt), from as u64, to as u64],
            ),
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } => words(
                h,
                3,
                &[id(subtask), u64::from(attempt), from as u64, to as u64],
            ),
            TraceEvent::Rpc {
                from,
                to,
                sent_at,
                rpc,
            } => {
                words(
                    h,
                    4,
                    &[
                        address_word(from),
                        address_word(to),
                        sent_at.as_nanos(),
                        id(rpc.subtask),
                        u64::from(rpc.attempt),
                    ],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::Push { channel, element } => {
                words(h, 5, &[ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Arrive { channel, element } => {
                words(h, 6, &[ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } => {
                words(h, 7, &[id(subtask), ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Blocked { subtask, channel } => words(h, 8, &[id(subtask), ch(channel)]),
            TraceEvent::BufferSent {
                channel,
                records,
                digest,
            } => words(h, 46, &[ch(channel), u64::from(records), digest]),
            TraceEvent::BufferArrived { channel, records } => {
                words(h, 47, &[ch(channel), u64::from(records)])
            }
            TraceEvent::BufferTaken {
                subtask,
                channel,
                records,
                digest,
            } => words(
                h,
                48,
                &[id(subtask), ch(channel), u64::from(records), digest],
            ),
            TraceEvent::EndOfInput { subtask } => words(h, 9, &[id(subtask)]),
            TraceEvent::CheckpointTriggered { checkpoint } => words(h, 10, &[checkpoint]),
            TraceEvent::CheckpointNotTriggered { reason } => words(h, 11, &[reason as u64]),
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                by_trigger,
            } => words(h, 12, &[id(subtask), checkpoint, u64::from(by_trigger)]),
            TraceEvent::BarrierInserted {
                subtask,
                channel,
                checkpoint,
            } => words(h, 13, &[id(subtask), ch(channel), checkpoint]),
            TraceEvent::AlignmentDone {
                subtask,
                checkpoint,
                alignment,
            } => words(h, 14, &[id(subtask), checkpoint, alignment.as_nanos()]),
            TraceEvent::SnapshotUploaded {
                subtask,
                attempt,
                checkpoint,
            } => words(h, 38, &[id(subtask), u64::from(attempt), checkpoint]),
            TraceEvent::BarriersCounted {
                subtask,
                checkpoint,
                waited,
                past_barrier,
            } => words(
                h,
                37,
                &[
                    id(subtask),
                    checkpoint,
                    waited.as_nanos(),
                    u64::from(past_barrier),
                ],
            ),
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                finished,
            } => words(
                h,
                15,
                &[
                    id(subtask),
                    u64::from(attempt),
                    checkpoint,
                    u64::from(finished),
                ],
            ),
            TraceEvent::Retrigger {
                checkpoint,
                finished,
                descendant,
            } => words(h, 16, &[checkpoint, id(finished), id(descendant)]),
            TraceEvent::CheckpointCompleted { checkpoint } => words(h, 17, &[checkpoint]),
            TraceEvent::CheckpointAborted { checkpoint, reason } => {
                let (a, b) = match reason {
                    AbortReason::Expired => (1, 0),
                    AbortReason::Subsumed => (2, 0),
                    AbortReason::Declined(d) => (3, d as u64),
                    AbortReason::TriggerMissed => (4, 0),
                    AbortReason::JobEnded => (5, 0),
                    AbortReason::Failover => (6, 0),
                    AbortReason::TriggerFailed => (7, 0),
                };
                words(h, 18, &[checkpoint, a, b]);
            }
            TraceEvent::Commit {
                subtask,
                checkpoint,
                record,
            } => {
                words(h, 19, &[id(subtask), checkpoint]);
                hash_element(h, Element::Record(record));
            }
            TraceEvent::TransactionCommitted {
                subtask,
                checkpoint,
                records,
                digest,
            } => match digest {
                None => words(h, 20, &[id(subtask), checkpoint, records]),
                // F1.14 step 12: the transaction's records are in the hash through their digest.
                Some(digest) => words(h, 20, &[id(subtask), checkpoint, records, digest]),
            },
            TraceEvent::ChainedSink { subtask, record } => {
                words(h, 45, &[id(subtask)]);
                hash_element(h, Element::Record(record));
            }
            TraceEvent::AllRecordsProcessed { channel } => words(h, 21, &[ch(channel)]),
            TraceEvent::ChannelReleased { channel, arrivals } => {
                words(h, 123, &[ch(channel), u64::from(arrivals)])
            }
            // F1.11: tags 40 to 43.
            TraceEvent::SavepointTriggered { checkpoint, drain } => {
                words(h, 40, &[checkpoint, u64::from(drain)])
            }
            TraceEvent::SavepointRefused { reason } => words(h, 41, &[reason as u64]),
            TraceEvent::SourceStopped {
                subtask,
                attempt,
                checkpoint,
                drain,
            } => words(
                h,
                42,
                &[
                    id(subtask),
                    u64::from(attempt),
                    checkpoint,
                    u64::from(drain),
                ],
            ),
            TraceEvent::SavepointFailed { checkpoint } => words(h, 43, &[checkpoint]),
            TraceEvent::FaultFired { index, fault } => {
                let (a, b) = match fault {
                    FaultEvent::FailTask(s) => (1, id(s)),
                    FaultEvent::LoseTaskManager(tm) => (2, u64::from(tm)),
                    FaultEvent::CrashJobMaster => (3, 0),
                    FaultEvent::DelaySpike => (4, 0),
                    FaultEvent::RpcLoss => (5, 0),
                    FaultEvent::DisconnectTaskManager(tm) => (6, u64::from(tm)),
                    FaultEvent::JobEventsWriteFailure => (7, 0),
                    FaultEvent::JobEventsReadFailure => (8, 0),
                    FaultEvent::TriggerTask {
                        subtask,
                        checkpoint,
                    } => (9, id(subtask) << 32 | checkpoint),
                    FaultEvent::FailSnapshot {
                        subtask,
                        checkpoint,
                        sync,
                    } => (10, id(subtask) << 33 | checkpoint << 1 | u64::from(sync)),
                    FaultEvent::HoldChannel(c) => (11, ch(c)),
                    FaultEvent::StopWithSavepoint { drain } => (12, u64::from(drain)),
                };
                words(h, 22, &[u64::from(index), a, b]);
            }
            TraceEvent::Failover {
                cause,
                restarting,
                full,
            } => words(
                h,
                23,
                &[
                    cause.map_or(u64::MAX, id),
                    u64::from(restarting),
                    u64::from(full),
                ],
            ),
            TraceEvent::CheckpointFailuresExceeded {
                checkpoint,
                failures,
            } => words(h, 39, &[checkpoint, u64::from(failures)]),
            TraceEvent::Restore {
                checkpoint,
                restarted,
                finished,
                region,
            } => words(
                h,
                24,
                &[
                    checkpoint,
                    u64::from(restarted),
                    u64::from(finished),
                    region.map_or(u64::MAX, u64::from),
                ],
            ),
            TraceEvent::JobMasterLost { incarnation } => words(h, 25, &[u64::from(incarnation)]),
            TraceEvent::JobMasterElected { incarnation } => words(h, 26, &[u64::from(incarnation)]),
            TraceEvent::TaskManagerLost { task_manager } => {
                words(h, 27, &[u64::from(task_manager)])
            }
            TraceEvent::TaskManagerStarted { task_manager } => {
                words(h, 28, &[u64::from(task_manager)])
            }
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                words(h, 29, &[u64::from(task_manager)])
            }
            TraceEvent::RestartsExhausted { failovers } => words(h, 30, &[u64::from(failovers)]),
            TraceEvent::RestoreRejected { checkpoint } => words(h, 32, &[checkpoint]),
            TraceEvent::ChannelState {
                subtask,
                checkpoint,
                channel,
                records,
                output,
            } => words(
                h,
                33,
                &[
                    id(subtask),
                    checkpoint,
                    ch(channel),
                    u64::from(records),
                    u64::from(output),
                ],
            ),
            TraceEvent::RpcDropped {
                from,
                to,
                rpc,
                fenced,
            } => {
                words(
                    h,
                    34,
                    &[
                        address_word(from),
                        address_word(to),
                        id(rpc.subtask),
                        u64::from(rpc.attempt),
                        u64::from(fenced),
                    ],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::RpcRefused { from, rpc } => {
                words(
                    h,
                    35,
                    &[address_word(from), id(rpc.subtask), u64::from(rpc.attempt)],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            } => words(
                h,
                36,
                &[outcome as u64, u64::from(reported), u64::from(missing)],
            ),
            TraceEvent::VertexInitialized {
                vertex,
                parallelism,
                input_bytes,
                adaptive,
            } => words(
                h,
                100,
                &[
                    u64::from(vertex.0),
                    u64::from(parallelism),
                    input_bytes,
                    u64::from(adaptive),
                ],
            ),
            TraceEvent::SplitAssigned {
                subtask,
                attempt,
                split,
            } => words(h, 101, &[id(subtask), u64::from(attempt), opt(split), 0]),
            TraceEvent::PartitionWritten {
                subtask,
                attempt,
                bytes,
                remote,
            } => words(
                h,
                102,
                &[id(subtask), u64::from(attempt), bytes, u64::from(remote)],
            ),
            TraceEvent::JobEventLogged { what, snapshot } => {
                let (tag, x) = match what {
                    Logged::VertexInitialized(v) => (0, u64::from(v.0)),
                    Logged::Finished(s) => (1, id(s)),
                    Logged::Reset(n) => (2, u64::from(n)),
                };
                words(h, 103, &[tag, x, u64::from(snapshot), 0])
            }
            TraceEvent::JobEventsFlushed { events, reason } => {
                words(h, 104, &[u64::from(events), reason as u64, 0, 0])
            }
            TraceEvent::JobEventsLost { events } => words(h, 105, &[u64::from(events), 0, 0, 0]),
            TraceEvent::JobEventsWriteFailed { events } => {
                words(h, 118, &[u64::from(events), 0, 0, 0])
            }
            TraceEvent::JobEventsUnreadable { events } => {
                words(h, 119, &[u64::from(events), 0, 0, 0])
            }
            TraceEvent::RecoveryStarted {
                replayed,
                discarded,
                full_restart,
            } => words(
                h,
                106,
                &[
                    u64::from(replayed),
                    u64::from(discarded),
                    u64::from(full_restart),
                    0,
                ],
            ),
            TraceEvent::PartitionReported {
                task_manager,
                subtask,
                attempt,
                late,
            } => words(
                h,
                107,
                &[
                    u64::from(task_manager),
                    id(subtask),
                    u64::from(attempt),
                    u64::from(late),
                ],
            ),
            TraceEvent::PartitionReleased {
                subtask,
                attempt,
                remote,
            } => words(
                h,
                108,
                &[id(subtask), u64::from(attempt), u64::from(remote), 0],
            ),
            TraceEvent::ReleaseRequested {
                task_manager,
                subtask,
                attempt,
            } => words(
                h,
                115,
                &[u64::from(task_manager), id(subtask), u64::from(attempt), 0],
            ),
            TraceEvent::TaskRpcRefused {
                task_manager,
                subtask,
                attempt,
            } => words(
                h,
                116,
                &[u64::from(task_manager), id(subtask), u64::from(attempt), 0],
            ),
            TraceEvent::SubtaskReset { subtask, reason } => {
                words(h, 109, &[id(subtask), reason as u64, 0, 0])
            }
            TraceEvent::RecoveryEnded {
                recovered,
                rerun,
                timed_out,
            } => words(
                h,
                110,
                &[
                    u64::from(recovered),
                    u64::from(rerun),
                    u64::from(timed_out),
                    0,
                ],
            ),
            TraceEvent::PartitionNotFound { subtask, producer } => {
                words(h, 111, &[id(subtask), id(producer), 0, 0])
            }
            TraceEvent::TaskManagerDisconnected { task_manager } => {
                words(h, 112, &[u64::from(task_manager), 0, 0, 0])
            }
            TraceEvent::TaskManagerReconnected { task_manager } => {
                words(h, 113, &[u64::from(task_manager), 0, 0, 0])
            }
            TraceEvent::LeaderLost { task_manager } => {
                words(h, 120, &[u64::from(task_manager), 0, 0, 0])
            }
            TraceEvent::LeaderFound { task_manager } => {
                words(h, 121, &[u64::from(task_manager), 0, 0, 0])
            }
            TraceEvent::JobResultWritten => words(h, 122, &[0, 0, 0, 0]),
            TraceEvent::SpeculationChecked => words(h, 124, &[0, 0, 0, 0]),
            TraceEvent::OutputCommitted { subtask, records } => {
                words(h, 114, &[id(subtask), records, 0, 0])
            }
            TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                speculative,
            } => words(
                h,
                117,
                &[
                    id(subtask),
                    u64::from(attempt),
                    u64::from(task_manager),
                    u64::from(speculative),
                ],
            ),
            TraceEvent::RpcLost { from, to, retry } => words(
                h,
                31,
                &[address_word(from), address_word(to), retry.as_nanos()],
            ),
        }
    }
}

#[inline]
fn words(h: &mut TraceHasher, tag: u64, fields: &[u64]) {
    h.write_u64(tag);
    for &w in fields {
        h.write_u64(w);
    }
}

/// An RPC call as `(tag, word, word)` for the hash.
fn call_words(call: Call) -> (u64, u64, u64) {
    match call {
        Call::SubmitTask(restore) => (1, restore.checkpoint, u64::from(restore.finished)),
        Call::UpdateTaskExecutionState { state, cause } => {
            (2, state as u64, cause.map_or(0, |p| u64::from(p.0) + 1))
        }
        Call::TriggerCheckpoint(n) => (3, n, 0),
        Call::NotifyCheckpointComplete(n) => (4, n, 0),
        Call::NotifyCheckpointAborted(n) => (5, n, 0),
        Call::AcknowledgeCheckpoint {
            checkpoint,
            finished,
        } => (6, checkpoint, u64::from(finished)),
        Call::DeclineCheckpoint { checkpoint, reason } => (7, checkpoint, reason as u64),
        Call::TriggerMissed(n) => (8, n, 0),
        Call::Finishing => (9, 0, 0),
        Call::FinishingAnswer(set) => (10, set.base, set.mask),
        Call::CancelTask => (11, 0, 0),
        // The parallelism is the subtask's vertex's, fixed by the graph: it adds nothing.
        Call::ReportExecution { state, .. } => (12, state as u64, 0),
        Call::ReportDone => (13, 0, 0),
        Call::TriggerFailed(n) => (14, n, 0),
        Call::TriggerSavepoint { checkpoint, drain } => (15, checkpoint, u64::from(drain)),
        Call::RequestSplit => (16, 0, 0),
        Call::AssignSplit(split) => (17, split.map_or(u64::MAX, u64::from), 0),
        // Batch calls: never recorded today, tagged so that they could be without a clash.
        Call::RegisterTaskManager => (18, 0, 0),
        Call::ReleasePartition => (19, 0, 0),
        Call::AskPartitions => (20, 0, 0),
        Call::ReportPartition { bytes } => (21, bytes, 0),
        Call::ReportSplit(split) => (22, u64::from(split), 0),
        Call::ReportInput {
            producer,
            producer_attempt,
        } => (23, u64::from(producer.0), u64::from(producer_attempt)),
    }
}

fn address_word(address: Address) -> u64 {
    match address {
        Address::JobMaster => u64::MAX,
        Address::TaskManager(i) => u64::from(i),
    }
}

// Always: it is on every record's path, and a call costs a fifth of what it does.
#[inline(always)]
fn hash_element(h: &mut TraceHasher, element: Element) {
    match element {
        Element::Record(r) => words(
            h,
            1,
            &[
                u64::from(r.origin.0),
                u64::from(r.key),
                r.seq,
                r.value as u64,
            ],
        ),
        Element::EndOfPartition => words(h, 2, &[]),
        Element::Barrier(n) => words(h, 3, &[n]),
        Element::EndOfData(StopMode::Drain) => words(h, 4, &[]),
        // F1.11: a new word, so that every EndOfData hashed before keeps its words.
        Element::EndOfData(StopMode::NoDrain) => words(h, 7, &[]),
        Element::PriorityBarrier(n) => words(h, 5, &[n]),
        Element::CancelMarker(n) => words(h, 6, &[n]),
    }
}
