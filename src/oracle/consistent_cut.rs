//! `consistent-cut` (P1.4, P1.8): where every channel stood when its two ends snapshotted a
//! checkpoint, whether the snapshots of a completed checkpoint form a consistent cut (what the
//! producer sent before its barrier is what the consumer processed, persisted as input channel
//! state, or the producer holds as output channel state), and what a restore undoes.

use super::{Invariant, Oracles, Violation};
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use sim::Instant;
use std::collections::BTreeMap;

/// Where each channel stood when its endpoints took their snapshots for one checkpoint.
pub(super) struct Cut {
    /// Per channel: records the producer had sent when it snapshotted (`u64::MAX`: no
    /// snapshot yet).
    pub(super) sent: Vec<u64>,
    /// Per channel: records the consumer had processed when it snapshotted.
    pub(super) processed: Vec<u64>,
    /// Subtasks that snapshotted after their end of input.
    pub(super) final_snapshots: Vec<SubtaskId>,
    /// Unaligned (P1.4): records persisted as channel state, per channel: by the consumer
    /// (input) and by the producer (output).
    pub(super) input_state: BTreeMap<u32, u64>,
    pub(super) output_state: BTreeMap<u32, u64>,
}

/// The per-channel arrays (`sent`, `processed`) of cuts settled before, all [`UNSET`], for the
/// next checkpoint's [`Cut::new`]: at most as many pairs as cuts were open at once.
pub(super) type SpareCuts = Vec<(Vec<u64>, Vec<u64>)>;

impl Cut {
    /// A cut with no snapshot yet, on a pair of per-channel arrays from `spare` or new ones.
    /// With a million channels each array is 8 MiB, which new arrays for every checkpoint
    /// faulted in and cleared again each time. A consumer's snapshot writes a thousand
    /// entries of `processed` a page apart, so that one sits on huge pages; a producer's
    /// channels are adjacent, so `sent` need not ([`per_channel`]).
    pub(super) fn new(channels: usize, spare: &mut SpareCuts) -> Cut {
        let (sent, processed) = spare.pop().unwrap_or_else(|| {
            (
                per_channel(channels, UNSET, false),
                per_channel(channels, UNSET, true),
            )
        });
        Cut {
            sent,
            processed,
            final_snapshots: Vec::new(),
            input_state: BTreeMap::new(),
            output_state: BTreeMap::new(),
        }
    }

    /// Gives this cut's per-channel arrays back to `spare`, reset to [`UNSET`] (a checkpoint
    /// aborted, which [`Oracles::check_cut`]'s pass does not reset).
    pub(super) fn recycle(mut self, spare: &mut SpareCuts) {
        self.sent.fill(UNSET);
        self.processed.fill(UNSET);
        spare.push((self.sent, self.processed));
    }
}

/// A per-channel array of `value`s; on huge pages if it is read or written `at_random` (or a
/// page apart, as a consumer's inputs are). A job with a million channels makes each 8 MiB
/// or more: on small pages such accesses miss the TLB nearly every time (a p = 1000 run spent
/// 5% less user time with the oracle's arrays on huge pages). Arrays walked in order stay on
/// small pages: huge ones cost system time to fault in (twice as much in that run with every
/// array on them) and save nothing there (`sim::hugepages`; nothing a run computes depends
/// on it).
pub(super) fn per_channel<T: Clone>(channels: usize, value: T, at_random: bool) -> Vec<T> {
    if !at_random {
        return vec![value; channels];
    }
    let mut array = sim::hugepages::vec(channels);
    array.resize(channels, value);
    array
}

const UNSET: u64 = u64::MAX;

impl Oracles {
    /// Remembers where every channel of `subtask` stood when it snapshotted `checkpoint`.
    pub(super) fn snapshot(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        checkpoint: u64,
        finished: bool,
    ) {
        let channels = graph.channels.len();
        let spare = &mut self.spare_cuts;
        let cut = self
            .cuts
            .entry(checkpoint)
            .or_insert_with(|| Cut::new(channels, spare));
        let s = &graph.subtasks[subtask.index()];
        for gate in &s.outputs {
            for &c in &gate.channels {
                cut.sent[c.index()] = self.sent[c.index()];
            }
        }
        for &c in &s.inputs {
            cut.processed[c.index()] = self.processed[c.index()];
        }
        // F1.11: a synchronous savepoint covers the last state of every task in it, stopped
        // with drain (final) or without (its operators never finish).
        let savepoint = self
            .savepoints
            .as_ref()
            .is_some_and(|s| s.is_savepoint(checkpoint));
        if finished || savepoint {
            cut.final_snapshots.push(subtask);
        }
    }

    /// `consistent-cut`: in a completed checkpoint, every channel's producer has sent exactly
    /// the records its consumer has processed (aligned checkpoints capture no channel state).
    /// A subtask recorded finished stands for everything it ever sent or processed, so it must
    /// really have finished.
    pub(super) fn check_cut(
        &mut self,
        graph: &ExecutionGraph,
        checkpoint: u64,
        finished: &[SubtaskId],
        index: u64,
        now: Instant,
    ) {
        let mut cut = self
            .cuts
            .remove(&checkpoint)
            .unwrap_or_else(|| Cut::new(graph.channels.len(), &mut self.spare_cuts));
        for &s in &cut.final_snapshots {
            self.final_covered[s.index()] = true;
        }
        let mut is_finished = vec![false; graph.subtasks.len()];
        for &s in finished {
            is_finished[s.index()] = true;
            if !self.finished[s.index()] && !self.reported_finishing[s.index()] {
                let name = graph.subtask_name(s).to_string();
                return self.violate(Violation {
                    invariant: Invariant::ConsistentCut,
                    time: now,
                    actors: vec![name.clone()],
                    event_index: index,
                    message: format!(
                        "checkpoint {checkpoint} records {name} as finished, but it has not finished: the cut claims output it never produced"
                    ),
                });
            }
        }
        self.positions.0 = checkpoint;
        for (c, info) in graph.channels.iter().enumerate() {
            let side = |cut_value: u64, live: u64, subtask: SubtaskId| {
                if cut_value != UNSET {
                    Some(cut_value)
                } else if is_finished[subtask.index()] {
                    Some(live)
                } else {
                    None
                }
            };
            // Each entry is read once, here, and left `UNSET` for the next checkpoint's cut.
            let sent = side(
                std::mem::replace(&mut cut.sent[c], UNSET),
                self.sent[c],
                info.from,
            );
            let processed = side(
                std::mem::replace(&mut cut.processed[c], UNSET),
                self.processed[c],
                info.to,
            );
            self.positions.1[c] = (sent.unwrap_or(0), processed.unwrap_or(0));
            // The records sent before the barrier are exactly those the consumer processed
            // before its snapshot plus those it persisted as input channel state. (Output
            // state is the producer's: records it emitted before its snapshot that went out
            // after the barrier; a restore sends them again.)
            let key = c as u32;
            let output_state = cut.output_state.get(&key).copied().unwrap_or(0);
            let input_state = cut.input_state.get(&key).copied().unwrap_or(0);
            let processed = processed.map(|n| n + input_state);
            let channel = || graph.channel_name(ChannelId(c as u32)).to_string();
            let message = match (sent, processed) {
                (Some(a), Some(b)) if a == b => continue,
                // F1.7: the consumer went on processing the channel after its barrier.
                (Some(a), Some(b)) if self.at_least_once && b > a => continue,
                (Some(a), Some(b)) if self.at_least_once => format!(
                    "checkpoint {checkpoint}, channel {}: the producer sent {a} records before its barrier, but the consumer snapshotted after processing only {b} of them: at least once, a snapshot must hold every record sent before each barrier, or a restore loses the rest (F1.7)",
                    channel()
                ),
                (Some(a), Some(b)) => format!(
                    "checkpoint {checkpoint}, channel {}: the producer sent {a} records before its barrier, but the consumer's cut holds {b} ({} processed before its snapshot, {input_state} persisted as input channel state; the producer's output state holds {output_state} more)",
                    channel(),
                    b - input_state
                ),
                (None, _) | (_, None) => format!(
                    "checkpoint {checkpoint} completed without the state of an endpoint of {}",
                    channel()
                ),
            };
            return self.violate(Violation {
                invariant: Invariant::ConsistentCut,
                time: now,
                actors: vec![
                    graph.subtask_name(info.from).to_string(),
                    graph.subtask_name(info.to).to_string(),
                ],
                event_index: index,
                message,
            });
        }
        // Every entry was read and reset above: the next checkpoint's cut takes the arrays as
        // they are.
        self.spare_cuts.push((cut.sent, cut.processed));
    }

    /// The job restored from `checkpoint` (P1.8): it must be a completed one (a consistent
    /// cut), and what it records finished must stay finished.
    pub(super) fn restored(
        &mut self,
        graph: &ExecutionGraph,
        checkpoint: u64,
        region: Option<u32>,
        index: u64,
        now: Instant,
    ) {
        // Every channel of the restored scope restarts where the checkpoint's cut left it
        // (from nothing without one): what was sent or processed since is undone.
        let in_scope = |s: SubtaskId| region.is_none_or(|r| graph.regions[s.index()] == r);
        for (c, info) in graph.channels.iter().enumerate() {
            if in_scope(info.from) || in_scope(info.to) {
                let (sent, processed) = if checkpoint != 0 && self.positions.0 == checkpoint {
                    self.positions.1[c]
                } else {
                    (0, 0)
                };
                self.sent[c] = sent;
                self.processed[c] = processed;
            }
        }
        if checkpoint == 0 {
            return; // nothing completed yet: everything starts afresh
        }
        let Some(finished) = self.completed.get(&checkpoint) else {
            return self.violate(Violation {
                invariant: Invariant::ConsistentCut,
                time: now,
                actors: vec!["JobMaster".to_owned()],
                event_index: index,
                message: format!(
                    "the job restored from checkpoint {checkpoint}, which never completed: its snapshots need not form a consistent cut (P1.8)"
                ),
            });
        };
        for s in finished.clone() {
            self.must_stay_finished[s.index()] = true;
        }
        let _ = graph;
    }
}
