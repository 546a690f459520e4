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
//! A channel may be **held** (the fault `hold_channel`): an element whose arrival comes while
//! the channel is held stays on the wire, and at the release every such element arrives, in
//! order. Credit is unchanged, so a producer still fills the channel up to its capacity and then
//! waits, as behind a stalled connection.
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
    /// Channels a `hold_channel` fault holds, by channel index; empty in most runs, so the
    /// arrival path checks one length.
    held: BTreeMap<u32, Hold>,
    rng: Stream,
}

/// A held channel: how many holds are in effect (two faults may hold one channel), and how
/// many arrivals came meanwhile and wait for the release.
#[derive(Debug, Default)]
struct Hold {
    holds: u32,
    deferred: u32,
}

impl DataPlane {
    pub fn new(graph: &ExecutionGraph, network: &Network, streams: &RandomStreams) -> DataPlane {
        // One lookup per channel, by (producer, consumer): a scan of the list per channel would
        // cost channels × entries, billions for a large job with a long list.
        let subtask = |r: crate::scenario::SubtaskRef| graph.subtask(r).0;
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
            held: BTreeMap::new(),
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

    /// A hold on `channel` begins: from now on, its arrivals wait for the release.
    pub fn hold(&mut self, channel: ChannelId) {
        self.held.entry(channel.0).or_default().holds += 1;
    }

    /// A hold on `channel` ends. When it was the last, returns how many arrivals waited: the
    /// caller schedules them now (an arrival always takes the oldest element on the wire, so
    /// they keep their order).
    pub fn release(&mut self, channel: ChannelId) -> Option<u32> {
        let hold = self
            .held
            .get_mut(&channel.0)
            .expect("released a channel that is not held");
        hold.holds -= 1;
        if hold.holds > 0 {
            return None;
        }
        self.held.remove(&channel.0).map(|h| h.deferred)
    }

    /// An arrival on `channel` is due now. If the channel is held it waits for the release
    /// (and this returns true); otherwise the caller lets it arrive.
    #[inline]
    pub fn defer_if_held(&mut self, channel: ChannelId) -> bool {
        if self.held.is_empty() {
            return false;
        }
        match self.held.get_mut(&channel.0) {
            Some(hold) => {
                hold.deferred += 1;
                true
            }
            None => false,
        }
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
        // What waited for a hold's release vanished with the partition; the hold goes on.
        if let Some(hold) = self.held.get_mut(&channel.0) {
            hold.deferred = 0;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Element, StopMode};

    /// One source subtask feeding one sink subtask: a single channel, capacity 2.
    fn plane() -> DataPlane {
        let scenario = crate::scenario::parse(
            r#"{"name": "t", "mode": "streaming", "job": {"vertices": [
                {"id": "src", "operator": "source", "parallelism": 1},
                {"id": "sink", "operator": "sink", "parallelism": 1}],
                "edges": [{"from": "src", "to": "sink", "pattern": "forward"}]},
                "network": {"channel_capacity": 2}}"#,
            "t.json",
        )
        .expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        DataPlane::new(&graph, &scenario.network, &RandomStreams::new(0))
    }

    const C: ChannelId = ChannelId(0);

    /// A held channel keeps its arrivals for the release, in order; credit still counts what
    /// waits on the wire, so the producer is back-pressured as behind a stalled connection.
    #[test]
    fn a_hold_defers_arrivals_until_its_release() {
        let mut p = plane();
        assert!(!p.defer_if_held(C), "nothing is held");
        p.hold(C);
        p.push(
            Instant::ZERO,
            C,
            Element::EndOfData(StopMode::Drain),
            Duration::ZERO,
        );
        p.push(Instant::ZERO, C, Element::EndOfPartition, Duration::ZERO);
        assert!(p.defer_if_held(C));
        assert!(p.defer_if_held(C));
        assert_eq!(p.buffered(C), 0, "nothing reached the consumer");
        assert_eq!(p.release(C), Some(2), "both arrivals waited");
        assert!(!p.defer_if_held(C), "released");
        assert_eq!(
            p.arrive(C).0,
            Element::EndOfData(StopMode::Drain),
            "the oldest first"
        );
        assert_eq!(p.arrive(C).0, Element::EndOfPartition);
    }

    /// Two holds on one channel: it stays held until both end; the count of waiting arrivals
    /// is handed over once, at the last release.
    #[test]
    fn a_channel_held_twice_waits_for_both_releases() {
        let mut p = plane();
        p.hold(C);
        p.hold(C);
        assert!(p.defer_if_held(C));
        assert_eq!(p.release(C), None, "one hold is left");
        assert!(p.defer_if_held(C), "still held");
        assert_eq!(p.release(C), Some(2));
    }

    /// A partition released during a hold drops what waited (it belonged to the old epoch);
    /// the hold itself goes on.
    #[test]
    fn a_reset_drops_the_waiting_arrivals_but_not_the_hold() {
        let mut p = plane();
        p.hold(C);
        p.push(
            Instant::ZERO,
            C,
            Element::EndOfData(StopMode::Drain),
            Duration::ZERO,
        );
        assert!(p.defer_if_held(C));
        p.reset(C, Instant::ZERO);
        assert!(p.defer_if_held(C), "the hold outlives the reset");
        assert_eq!(
            p.release(C),
            Some(1),
            "only the arrival after the reset waits"
        );
    }
}
