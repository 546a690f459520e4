//! Data channels and RPC links: latency, FIFO order and back-pressure, but no meaning.
//!
//! A **channel** is a FIFO from one producer subtask to one consumer subtask. Each element
//! travels with a latency drawn from the `network.channel` stream, but never overtakes the
//! element before it: its arrival time is at least the previous arrival's. The channel's queue
//! holds both the elements still on the wire and those that arrived and wait in the consumer's
//! input buffer; `arrived` splits the two. Records need a credit: a producer may push a record
//! only while fewer than `capacity` records are in the channel (on the wire or buffered), which
//! is how a slow consumer back-pressures its producers. Credit comes back the instant the
//! consumer dequeues a record (a simplification: Flink announces credit over the network).
//!
//! An **RPC link** is the ordered connection between the JobMaster and one TaskManager, one per
//! direction; an RPC's latency is drawn from `network.rpc`, and like Pekko's actor messaging a
//! link never reorders.

use crate::graph::{ChannelId, ExecutionGraph};
use crate::record::Element;
use crate::scenario::{DurationRange, Network};

mod rpc;
pub use rpc::{Envelope, LinkId, RpcLinks, RpcPolicy};
use sim::{Duration, Instant, RandomStreams, Stream};
use std::collections::{BTreeMap, VecDeque};

/// Runtime state of one channel. Kept small: a million of them must fit comfortably in memory.
#[derive(Debug, Default)]
pub struct Channel {
    /// Elements in FIFO order; the first `arrived` are in the consumer's input buffer, the
    /// rest on the wire.
    queue: VecDeque<Element>,
    arrived: u32,
    /// Records in `queue` (each holds one credit).
    records: u32,
    /// When the newest element arrives (or arrived): the next one may not arrive earlier.
    last_arrival: Instant,
    /// The producer tried to push a record while the channel was full and waits for credit.
    producer_waiting: bool,
    /// Bumped when a failover releases the channel's partition (P1.8): arrivals scheduled
    /// before carry the old epoch and are ignored.
    epoch: u32,
}

/// Every channel of the job, plus the latency stream they draw from.
pub struct DataPlane {
    channels: Vec<Channel>,
    capacity: u32,
    latency: DurationRange,
    /// `network.channels`: channels with a latency of their own, by channel index. A map, not
    /// a field of every channel: a million channels must stay small, and most runs have none.
    own_latency: BTreeMap<u32, DurationRange>,
    rng: Stream,
}

impl DataPlane {
    pub fn new(graph: &ExecutionGraph, network: &Network, streams: &RandomStreams) -> DataPlane {
        // One lookup per channel, by (producer, consumer): a scan of the list per channel would
        // cost channels × entries, billions for a large job with a long list.
        let subtask = |r: crate::scenario::SubtaskRef| graph.vertices[r.vertex].first + r.index;
        let by_pair: BTreeMap<(u32, u32), DurationRange> = network
            .channels
            .iter()
            .map(|o| ((subtask(o.from), subtask(o.to)), o.latency))
            .collect();
        let own_latency = if by_pair.is_empty() {
            BTreeMap::new()
        } else {
            graph
                .channels
                .iter()
                .enumerate()
                .filter_map(|(c, info)| {
                    let latency = by_pair.get(&(info.from.0, info.to.0))?;
                    Some((c as u32, *latency))
                })
                .collect()
        };
        DataPlane {
            channels: (0..graph.channels.len())
                .map(|_| Channel::default())
                .collect(),
            capacity: network.channel_capacity,
            latency: network.channel_latency,
            own_latency,
            rng: streams.stream("network.channel"),
        }
    }

    /// True when a record pushed now would have to wait for credit.
    #[inline]
    pub fn is_full(&self, channel: ChannelId) -> bool {
        self.channels[channel.index()].records >= self.capacity
    }

    /// Remembers that the producer is waiting for credit on `channel`.
    pub fn wait_for_credit(&mut self, channel: ChannelId) {
        self.channels[channel.index()].producer_waiting = true;
    }

    /// Puts `element` on the wire and returns when it will arrive and the channel's epoch. The
    /// caller schedules the arrival. Records must have credit (`!is_full`). `extra` is added
    /// latency (a fault's delay spike).
    #[inline]
    pub fn push(
        &mut self,
        now: Instant,
        channel: ChannelId,
        element: Element,
        extra: Duration,
    ) -> (Instant, u32) {
        let range = if self.own_latency.is_empty() {
            self.latency
        } else {
            self.own_latency
                .get(&channel.0)
                .copied()
                .unwrap_or(self.latency)
        };
        let latency = draw(&mut self.rng, range) + extra;
        let c = &mut self.channels[channel.index()];
        if element.needs_credit() {
            assert!(c.records < self.capacity, "pushed a record without credit");
            c.records += 1;
        }
        c.queue.push_back(element);
        let arrival = (now + latency).max(c.last_arrival);
        c.last_arrival = arrival;
        (arrival, c.epoch)
    }

    /// The channel's current epoch.
    pub fn epoch(&self, channel: ChannelId) -> u32 {
        self.channels[channel.index()].epoch
    }

    /// Releases the channel's partition (P1.8): everything on the wire or buffered vanishes,
    /// and a new epoch begins. The producer's and consumer's attempts must be gone.
    pub fn reset(&mut self, channel: ChannelId, now: Instant) {
        let c = &mut self.channels[channel.index()];
        c.queue.clear();
        c.arrived = 0;
        c.records = 0;
        c.producer_waiting = false;
        c.last_arrival = now;
        c.epoch += 1;
    }

    /// The oldest element on the wire reaches the consumer's buffer. Returns it and whether the
    /// buffer was empty before (the consumer may need waking).
    #[inline]
    pub fn arrive(&mut self, channel: ChannelId) -> (Element, bool) {
        let c = &mut self.channels[channel.index()];
        let element = c.queue[c.arrived as usize];
        let was_empty = c.arrived == 0;
        c.arrived += 1;
        (element, was_empty)
    }

    /// Elements in the consumer's input buffer of `channel`.
    #[inline]
    pub fn buffered(&self, channel: ChannelId) -> u32 {
        self.channels[channel.index()].arrived
    }

    /// The records buffered on `channel`, oldest first (an unaligned snapshot copies them as
    /// channel state; they stay buffered and are processed as usual).
    pub fn buffered_records(&self, channel: ChannelId) -> Vec<crate::record::Record> {
        let c = &self.channels[channel.index()];
        c.queue
            .iter()
            .take(c.arrived as usize)
            .filter_map(|e| match e {
                Element::Record(r) => Some(*r),
                _ => None,
            })
            .collect()
    }

    /// Removes the element that just arrived (an unaligned barrier, handled at once as a
    /// priority event, P1.4).
    pub fn remove_newest(&mut self, channel: ChannelId) {
        let c = &mut self.channels[channel.index()];
        let removed = c.queue.remove(c.arrived as usize - 1);
        debug_assert!(matches!(removed, Some(Element::PriorityBarrier(_))));
        c.arrived -= 1;
    }

    /// The newest buffered element, without taking it.
    pub fn last_buffered(&self, channel: ChannelId) -> Option<Element> {
        let c = &self.channels[channel.index()];
        (c.arrived > 0).then(|| c.queue[c.arrived as usize - 1])
    }

    /// Puts `element` into the consumer's buffer right before the buffered EndOfPartition
    /// (P1.3 steps 2-3). EndOfPartition is the last element a channel ever carries, so it is the
    /// last in the queue.
    pub fn insert_before_eop(&mut self, channel: ChannelId, element: Element) {
        let c = &mut self.channels[channel.index()];
        assert_eq!(
            c.arrived as usize,
            c.queue.len(),
            "nothing follows EndOfPartition"
        );
        assert_eq!(c.queue.back(), Some(&Element::EndOfPartition));
        assert!(!element.needs_credit(), "only events are inserted");
        c.queue.insert(c.queue.len() - 1, element);
        c.arrived += 1;
    }

    /// Takes the oldest buffered element, returning its credit. The flag says the producer was
    /// waiting for that credit and must be woken.
    #[inline]
    pub fn take(&mut self, channel: ChannelId) -> (Element, bool) {
        let c = &mut self.channels[channel.index()];
        assert!(c.arrived > 0, "took from a channel with nothing buffered");
        let element = c.queue.pop_front().expect("arrived elements are queued");
        c.arrived -= 1;
        let mut wake_producer = false;
        if element.needs_credit() {
            c.records -= 1;
            wake_producer = std::mem::take(&mut c.producer_waiting);
        }
        (element, wake_producer)
    }

    /// Records and events on the wire or buffered, for diagnostics.
    pub fn occupancy(&self, channel: ChannelId) -> (usize, u32) {
        let c = &self.channels[channel.index()];
        (c.queue.len(), c.records)
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }
}

/// A duration from `range`, without consuming a draw when the range is a single value (so a
/// fixed latency costs nothing and does not depend on the stream).
#[inline]
pub fn draw(rng: &mut Stream, range: DurationRange) -> sim::Duration {
    if range.min == range.max {
        range.min
    } else {
        rng.duration_between(range.min, range.max)
    }
}
