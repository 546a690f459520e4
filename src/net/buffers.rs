//! Flink's network buffers (`docs/rules.md` F1.14): what each channel's records travel in, and
//! the credit a consumer's buffers give its producers.
//!
//! The producer serialises records into its subpartition's *current buffer*; a buffer goes on
//! the wire whole (one arrival for all its records) when it is full, when the output flusher
//! fires, or before an event. The consumer receives each data buffer into a buffer of its own:
//! one of the channel's *exclusive* buffers, or a *floating* one its input gate lends. A
//! producer may send a data buffer only while the consumer has such a buffer free (credit);
//! events (barriers, EndOfData, EndOfPartition) need none. A consumer's buffer is recycled,
//! and its credit returns, when the consumer has taken the buffer's last record.
//!
//! This module keeps only that bookkeeping; the records themselves stay, one element each, in
//! the channel's queue (`super::Channel`), so every consumer and every oracle still sees
//! records.

use crate::graph::{ChannelId, ExecutionGraph};
use crate::scenario::NetworkBuffers;
use std::collections::{BTreeMap, VecDeque};

/// Buffer state of every channel and input gate.
pub(super) struct Buffers {
    pub(super) settings: NetworkBuffers,
    pub(super) per_buffer: u32,
    pub(super) channels: Vec<ChannelBuffers>,
    /// Per channel, the index of its consumer's input gate (one gate per consumer and edge).
    gate_of: Vec<u32>,
    gates: Vec<Gate>,
}

/// One channel's buffers.
#[derive(Debug, Default)]
pub(super) struct ChannelBuffers {
    /// Records in each data buffer on the wire or in the consumer's queue, oldest first: each
    /// holds one of the consumer's buffers (one credit).
    sizes: VecDeque<u32>,
    /// Records serialised into the current buffer and not yet sent; they are the last
    /// `unsent` elements of the channel's queue.
    pub(super) unsent: u32,
    /// Buffers among `sizes` the channel borrowed from its gate (beyond its exclusive ones).
    floating: u32,
    /// Records the consumer took from the oldest buffer in `sizes` so far (0: it has not
    /// started on it).
    taken_of_oldest: u32,
    /// Data buffers the consumer has finished on this channel since its partition began.
    pub(super) consumed: u64,
}

/// An input gate's pool of floating buffers (Flink's `BufferManager` and `LocalBufferPool`).
#[derive(Debug, Default)]
struct Gate {
    free: u32,
    /// Channels whose producer waits for a buffer, in the order they asked.
    waiting: VecDeque<u32>,
}

impl Buffers {
    pub(super) fn new(graph: &ExecutionGraph, settings: NetworkBuffers) -> Buffers {
        let mut gate_index: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let gate_of: Vec<u32> = graph
            .channels
            .iter()
            .map(|c| {
                let next = gate_index.len() as u32;
                *gate_index.entry((c.to.0, c.edge)).or_insert(next)
            })
            .collect();
        let gates = (0..gate_index.len())
            .map(|_| Gate {
                free: settings.floating_per_gate,
                waiting: VecDeque::new(),
            })
            .collect();
        Buffers {
            settings,
            per_buffer: settings.records_per_buffer(),
            channels: (0..graph.channels.len())
                .map(|_| ChannelBuffers::default())
                .collect(),
            gate_of,
            gates,
        }
    }

    /// F1.14: a data buffer may go on `channel` now: the consumer has one of its exclusive
    /// buffers free, or its gate can lend a floating one.
    pub(super) fn has_credit(&self, channel: ChannelId) -> bool {
        let c = &self.channels[channel.index()];
        c.sizes.len() < self.settings.exclusive_per_channel as usize
            || self.gates[self.gate_of[channel.index()] as usize].free > 0
    }

    /// The current buffer (`records` records) goes on the wire, taking one credit. The caller
    /// checked `has_credit`.
    pub(super) fn send(&mut self, channel: ChannelId, records: u32) {
        debug_assert!(self.has_credit(channel));
        let c = &mut self.channels[channel.index()];
        if c.sizes.len() >= self.settings.exclusive_per_channel as usize {
            self.gates[self.gate_of[channel.index()] as usize].free -= 1;
            c.floating += 1;
        }
        c.sizes.push_back(records);
        c.unsent = 0;
    }

    /// The consumer took `count` records of `channel`, all from its oldest buffer. When they
    /// were that buffer's last, the buffer is recycled: returns where its credit went, `Own`
    /// (an exclusive buffer, back to the channel) or `Gate` (a floating one, back to the
    /// gate's pool).
    pub(super) fn took_records(&mut self, channel: ChannelId, count: u32) -> Option<Recycled> {
        let c = &mut self.channels[channel.index()];
        let front = c.sizes.front_mut().expect("a record is in a buffer");
        debug_assert!(
            count <= *front,
            "took {count} records of a buffer of {front}"
        );
        *front -= count;
        if *front > 0 {
            c.taken_of_oldest += count;
            return None;
        }
        c.sizes.pop_front();
        c.taken_of_oldest = 0;
        c.consumed += 1;
        if c.floating > 0 {
            c.floating -= 1;
            self.gates[self.gate_of[channel.index()] as usize].free += 1;
            Some(Recycled::Gate)
        } else {
            Some(Recycled::Own)
        }
    }

    /// Records of `channel`'s oldest buffer the consumer has yet to take (0: none queued).
    pub(super) fn left_in_oldest(&self, channel: ChannelId) -> u32 {
        self.channels[channel.index()]
            .sizes
            .front()
            .copied()
            .unwrap_or(0)
    }

    /// The producer of `channel` waits for a buffer; it is woken by the next one its own
    /// channel or its gate frees.
    pub(super) fn wait(&mut self, channel: ChannelId) {
        self.gates[self.gate_of[channel.index()] as usize]
            .waiting
            .push_back(channel.0);
    }

    /// The next channel waiting on `channel`'s gate, oldest first (`is_waiting` filters out
    /// channels woken otherwise since).
    pub(super) fn next_waiting(
        &mut self,
        channel: ChannelId,
        mut is_waiting: impl FnMut(u32) -> bool,
    ) -> Option<ChannelId> {
        let gate = &mut self.gates[self.gate_of[channel.index()] as usize];
        while let Some(w) = gate.waiting.pop_front() {
            if is_waiting(w) {
                return Some(ChannelId(w));
            }
        }
        None
    }

    /// The channel's partition is released (P1.8): its buffers, floating ones back to the gate.
    pub(super) fn reset(&mut self, channel: ChannelId) {
        let c = &mut self.channels[channel.index()];
        self.gates[self.gate_of[channel.index()] as usize].free += c.floating;
        *c = ChannelBuffers::default();
    }

    /// Data buffers holding the first `records` records queued for the consumer (a partly
    /// taken buffer counts as one, as Flink persists it).
    pub(super) fn buffers_holding(&self, channel: ChannelId, records: u32) -> u32 {
        let mut left = records;
        let mut buffers = 0;
        for &size in &self.channels[channel.index()].sizes {
            if left == 0 {
                break;
            }
            buffers += 1;
            left = left.saturating_sub(size);
        }
        buffers
    }
}

/// Where a recycled buffer's credit went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recycled {
    Own,
    Gate,
}
