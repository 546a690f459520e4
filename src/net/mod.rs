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
//! With **network buffers** (F1.14, `network.buffer_size`) records are serialised into a
//! current buffer that goes on the wire whole, and credit counts the consumer's buffers, not
//! records (`buffers.rs`). The queue still holds one element per record: its last `unsent`
//! elements are the current buffer, not yet on the wire.
//!
//! An **RPC link** is the ordered connection between the JobMaster and one TaskManager, one per
//! direction; an RPC's latency is drawn from `network.rpc`, and like Pekko's actor messaging a
//! link never reorders.

use crate::graph::{ChannelId, ExecutionGraph};
use crate::record::Element;
use crate::scenario::{DurationRange, Network};

mod buffers;
mod fifo;
mod rpc;
use buffers::{Buffers, Recycled};
use fifo::Fifo;
pub use rpc::{Envelope, LinkId, RpcLinks, RpcPolicy};
use sim::{Duration, Instant, RandomStreams, Stream};
use std::collections::BTreeMap;

/// Runtime state of one channel. Kept to one cache line (with its element, while it holds at
/// most one: `fifo.rs`): a job with a million channels touches one at random on every arrival,
/// take and push, and each line is a miss.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Channel {
    /// Elements in FIFO order; the first `arrived` are in the consumer's input buffer, the
    /// rest on the wire.
    queue: Fifo,
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

const _: () = assert!(std::mem::size_of::<Channel>() == 64);

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
    /// F1.14: network buffers; `None` without `network.buffer_size`, and then no per-buffer
    /// state exists.
    buffers: Option<Buffers>,
    rng: Stream,
}

/// A buffer just put on the wire (F1.14): its records are elements `first..first + records`
/// of the channel's queue.
#[derive(Clone, Copy, Debug)]
pub struct SentBuffer {
    pub arrival: Instant,
    pub epoch: u32,
    pub first: usize,
    pub records: u32,
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
            channels: {
                // A million channels: 64 MiB touched at random, on huge pages where the
                // system allows (one TLB entry per 32 768 channels instead of 64).
                let mut channels = sim::hugepages::vec(graph.channels.len());
                channels.resize_with(graph.channels.len(), Channel::default);
                channels
            },
            capacity: network.channel_capacity,
            latency: network.channel_latency,
            own_latency,
            held: BTreeMap::new(),
            buffers: network.buffers.map(|b| Buffers::new(graph, b)),
            rng: streams.stream("network.channel"),
        }
    }

    /// Records travel in network buffers (F1.14).
    #[inline]
    pub fn uses_buffers(&self) -> bool {
        self.buffers.is_some()
    }

    fn buffers(&self) -> &Buffers {
        self.buffers.as_ref().expect("network buffers are on")
    }

    /// F1.14: records in `channel`'s current buffer, not yet sent.
    #[inline]
    pub fn unsent(&self, channel: ChannelId) -> u32 {
        self.buffers().channels[channel.index()].unsent
    }

    /// F1.14: the current buffer of `channel` has no room for another record.
    #[inline]
    pub fn current_full(&self, channel: ChannelId) -> bool {
        let b = self.buffers();
        b.channels[channel.index()].unsent >= b.per_buffer
    }

    /// F1.14: a zero buffer timeout, with which every record is sent as soon as it is written.
    #[inline]
    pub fn sends_every_record(&self) -> bool {
        self.buffers().settings.timeout == Duration::ZERO
    }

    /// F1.14: serialises a record into `channel`'s current buffer, which has room.
    #[inline]
    pub fn write(&mut self, channel: ChannelId, element: Element) {
        debug_assert!(element.needs_credit() && !self.current_full(channel));
        self.channels[channel.index()].queue.push_back(element);
        let b = self.buffers.as_mut().expect("network buffers are on");
        b.channels[channel.index()].unsent += 1;
    }

    /// F1.14: puts `channel`'s current buffer (not empty) on the wire if the consumer has a
    /// buffer for it; `None`: no credit, it stays. The caller schedules one arrival for all
    /// its records and records their pushes.
    pub fn send_buffer(
        &mut self,
        now: Instant,
        channel: ChannelId,
        extra: Duration,
    ) -> Option<SentBuffer> {
        let b = self.buffers.as_mut().expect("network buffers are on");
        let records = b.channels[channel.index()].unsent;
        debug_assert!(records > 0, "sent an empty buffer");
        if !b.has_credit(channel) {
            return None;
        }
        b.send(channel, records);
        let latency = self.draw_latency(channel) + extra;
        let c = &mut self.channels[channel.index()];
        let arrival = (now + latency).max(c.last_arrival);
        c.last_arrival = arrival;
        Some(SentBuffer {
            arrival,
            epoch: c.epoch,
            first: c.queue.len() - records as usize,
            records,
        })
    }

    /// Elements in `channel`'s queue: buffered, on the wire and (F1.14) in the current buffer.
    pub fn queued(&self, channel: ChannelId) -> usize {
        self.channels[channel.index()].queue.len()
    }

    /// F1.14: appends the records `first..first + len` of `channel`'s queue (a data buffer's)
    /// to `out`.
    #[inline]
    pub fn copy_records(
        &self,
        channel: ChannelId,
        first: usize,
        len: usize,
        out: &mut Vec<crate::record::Record>,
    ) {
        let (a, b) = self.channels[channel.index()].queue.slices(first, len);
        for part in [a, b] {
            out.extend(part.iter().map(|element| match *element {
                Element::Record(record) => record,
                other => unreachable!("a data buffer holds records only, got {other:?}"),
            }));
        }
    }

    /// Element `index` of `channel`'s queue (oldest first).
    #[inline]
    pub fn element(&self, channel: ChannelId, index: usize) -> Element {
        self.channels[channel.index()].queue.get(index)
    }

    /// F1.14: data buffers in the consumer's queue of `channel` holding its first `records`
    /// records, and data buffers it finished on the channel so far (channel state is
    /// counted in buffers).
    pub fn buffers_holding(&self, channel: ChannelId, records: u32) -> u32 {
        self.buffers().buffers_holding(channel, records)
    }

    pub fn buffers_consumed(&self, channel: ChannelId) -> u64 {
        self.buffers().channels[channel.index()].consumed
    }

    /// F1.14 step 9: records of the oldest data buffer of `channel` that have arrived and are
    /// still to be taken: what a step per buffer takes, unless an output blocks it.
    #[inline]
    pub fn left_of_buffer(&self, channel: ChannelId) -> u32 {
        let left = self.buffers().left_in_oldest(channel);
        left.min(self.channels[channel.index()].arrived)
    }

    /// F1.14 step 9: takes the oldest element of `channel`'s input, a record of its oldest
    /// data buffer, leaving the buffer's bookkeeping to [`DataPlane::took_records`].
    #[inline]
    pub fn pop_record(&mut self, channel: ChannelId) -> crate::record::Record {
        let c = &mut self.channels[channel.index()];
        assert!(c.arrived > 0, "took from a channel with nothing buffered");
        c.arrived -= 1;
        match c.queue.pop_front() {
            Some(Element::Record(record)) => record,
            other => unreachable!("a data buffer holds records only, got {other:?}"),
        }
    }

    /// F1.14 step 9: the consumer took `count` records of `channel`'s oldest data buffer
    /// ([`DataPlane::pop_record`]): as many takes' worth of bookkeeping at once. Returns the
    /// channel whose producer a recycled buffer's credit wakes, as [`DataPlane::take`] does.
    #[inline]
    pub fn took_records(&mut self, channel: ChannelId, count: u32) -> Option<ChannelId> {
        let buffers = self.buffers.as_mut().expect("network buffers are on");
        let recycled = buffers.took_records(channel, count);
        self.wake_for(channel, recycled)
    }

    /// Whose producer waits for the credit a recycled buffer of `channel` (if one was)
    /// returned: the channel's own, or the next one waiting on its gate.
    #[inline]
    fn wake_for(&mut self, channel: ChannelId, recycled: Option<Recycled>) -> Option<ChannelId> {
        let buffers = self.buffers.as_mut().expect("network buffers are on");
        match recycled {
            None => None,
            Some(Recycled::Own) => {
                std::mem::take(&mut self.channels[channel.index()].producer_waiting)
                    .then_some(channel)
            }
            Some(Recycled::Gate) => {
                let channels = &mut self.channels;
                buffers.next_waiting(channel, |w| {
                    std::mem::take(&mut channels[w as usize].producer_waiting)
                })
            }
        }
    }

    /// F1.14: records of one full buffer.
    pub fn records_per_buffer(&self) -> u32 {
        self.buffers().per_buffer
    }

    fn draw_latency(&mut self, channel: ChannelId) -> Duration {
        let range = if self.own_latency.is_empty() {
            self.latency
        } else {
            self.own_latency
                .get(&channel.0)
                .copied()
                .unwrap_or(self.latency)
        };
        draw(&mut self.rng, range)
    }

    /// True when a record pushed now would have to wait for credit.
    #[inline]
    pub fn is_full(&self, channel: ChannelId) -> bool {
        self.channels[channel.index()].records >= self.capacity
    }

    /// Remembers that the producer is waiting for credit on `channel` (with buffers, for a
    /// buffer of the channel's own or of its gate's).
    pub fn wait_for_credit(&mut self, channel: ChannelId) {
        self.channels[channel.index()].producer_waiting = true;
        if let Some(b) = &mut self.buffers {
            b.wait(channel);
        }
    }

    /// Puts `element` on the wire and returns when it will arrive and the channel's epoch. The
    /// caller schedules the arrival. Records must have credit (`!is_full`). `extra` is added
    /// latency (a fault's delay spike). With buffers (F1.14) only events are pushed, the
    /// current buffer sent before them; an unaligned barrier overtakes the current buffer.
    #[inline]
    pub fn push(
        &mut self,
        now: Instant,
        channel: ChannelId,
        element: Element,
        extra: Duration,
    ) -> (Instant, u32) {
        let latency = self.draw_latency(channel) + extra;
        let unsent = self
            .buffers
            .as_ref()
            .map_or(0, |b| b.channels[channel.index()].unsent);
        let c = &mut self.channels[channel.index()];
        if element.needs_credit() {
            assert!(c.records < self.capacity, "pushed a record without credit");
            c.records += 1;
        }
        if unsent > 0 {
            assert!(
                matches!(element, Element::PriorityBarrier(_)),
                "only an unaligned barrier overtakes the current buffer"
            );
            c.queue.insert(c.queue.len() - unsent as usize, element);
        } else {
            c.queue.push_back(element);
        }
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

    /// An arrival of `elements` elements on `channel` is due now. If the channel is held they
    /// wait for the release (and this returns true); otherwise the caller lets them arrive.
    #[inline]
    pub fn defer_if_held(&mut self, channel: ChannelId, elements: u32) -> bool {
        if self.held.is_empty() {
            return false;
        }
        match self.held.get_mut(&channel.0) {
            Some(hold) => {
                hold.deferred += elements;
                true
            }
            None => false,
        }
    }

    /// Starts loading the channel's state into the cache (see `sim::prefetch`).
    #[inline]
    pub fn prefetch(&self, channel: ChannelId) {
        if let Some(c) = self.channels.get(channel.index()) {
            sim::prefetch::read(c);
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
        if let Some(b) = &mut self.buffers {
            b.reset(channel);
        }
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
        let element = c.queue.get(c.arrived as usize);
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
                Element::Record(r) => Some(r),
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
        (c.arrived > 0).then(|| c.queue.get(c.arrived as usize - 1))
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
        assert_eq!(c.queue.back(), Some(Element::EndOfPartition));
        assert!(!element.needs_credit(), "only events are inserted");
        c.queue.insert(c.queue.len() - 1, element);
        c.arrived += 1;
    }

    /// Takes the oldest buffered element, returning its credit (with buffers, F1.14: when it
    /// was its buffer's last record). The channel returned is one whose producer was waiting
    /// for that credit and must be woken.
    #[inline]
    pub fn take(&mut self, channel: ChannelId) -> (Element, Option<ChannelId>) {
        let c = &mut self.channels[channel.index()];
        assert!(c.arrived > 0, "took from a channel with nothing buffered");
        let element = c.queue.pop_front().expect("arrived elements are queued");
        c.arrived -= 1;
        if !element.needs_credit() {
            return (element, None);
        }
        let Some(buffers) = &mut self.buffers else {
            c.records -= 1;
            let wake = std::mem::take(&mut c.producer_waiting);
            return (element, wake.then_some(channel));
        };
        let recycled = buffers.took_records(channel, 1);
        (element, self.wake_for(channel, recycled))
    }

    /// Records and events on the wire or buffered, for diagnostics.
    pub fn occupancy(&self, channel: ChannelId) -> (usize, u32) {
        let c = &self.channels[channel.index()];
        (c.queue.len(), c.records)
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// F1.14: the buffer settings, if records travel in buffers.
    pub fn buffer_settings(&self) -> Option<crate::scenario::NetworkBuffers> {
        self.buffers.as_ref().map(|b| b.settings)
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

    /// Two sources feeding one sink (two channels, one input gate) in buffers of two records,
    /// one exclusive buffer per channel and one floating buffer for the gate (F1.14).
    fn buffered_plane() -> DataPlane {
        let scenario = crate::scenario::parse(
            r#"{"name": "t", "mode": "streaming", "job": {"vertices": [
                {"id": "src", "operator": "source", "parallelism": 2},
                {"id": "sink", "operator": "sink", "parallelism": 1}],
                "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]},
                "network": {"buffer_size": 200, "record_bytes": 100,
                    "exclusive_buffers_per_channel": 1, "floating_buffers_per_gate": 1}}"#,
            "t.json",
        )
        .expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        DataPlane::new(&graph, &scenario.network, &RandomStreams::new(0))
    }

    fn record(seq: u64) -> Element {
        Element::Record(crate::record::source_record(
            crate::graph::SubtaskId(0),
            seq,
        ))
    }

    /// F1.14 steps 1, 2 and 5: records fill the current buffer; a full one goes whole while a
    /// consumer buffer is free (the channel's exclusive one, then the gate's floating one),
    /// and a recycled floating buffer goes to the producer that waited longest on the gate.
    #[test]
    fn buffers_carry_records_whole_and_credit_counts_buffers() {
        let mut p = buffered_plane();
        let other = ChannelId(1);
        let now = Instant::ZERO;
        p.write(C, record(0));
        assert!(!p.current_full(C));
        p.write(C, record(1));
        assert!(p.current_full(C), "two records of 100 bytes fill 200 bytes");
        let first = p
            .send_buffer(now, C, Duration::ZERO)
            .expect("the exclusive buffer");
        assert_eq!((first.first, first.records), (0, 2));
        assert_eq!(p.unsent(C), 0);
        p.write(C, record(2));
        p.send_buffer(now, C, Duration::ZERO)
            .expect("the gate's floating buffer");
        p.write(C, record(3));
        assert!(
            p.send_buffer(now, C, Duration::ZERO).is_none(),
            "no credit left"
        );
        assert_eq!(p.unsent(C), 1, "the buffer stays current");
        // The other channel of the gate still has its exclusive buffer, but not the floating.
        p.write(other, record(4));
        p.send_buffer(now, other, Duration::ZERO)
            .expect("its own exclusive buffer");
        p.write(other, record(5));
        assert!(p.send_buffer(now, other, Duration::ZERO).is_none());
        p.wait_for_credit(other);
        p.wait_for_credit(C);
        // The consumer takes the first buffer's records: credit only at its last.
        for _ in 0..3 {
            p.arrive(C);
        }
        assert_eq!(p.take(C), (record(0), None), "the buffer is half taken");
        // Its last record recycles a buffer; a channel gives back a floating one first, and
        // the gate lends it to the producer that waited longest.
        assert_eq!(p.take(C), (record(1), Some(other)));
        assert_eq!(p.take(C), (record(2), Some(C)), "then its exclusive one");
        assert_eq!(p.buffers_consumed(C), 2);
        assert!(p.send_buffer(now, other, Duration::ZERO).is_some());
    }

    /// F1.14 step 9: a buffer's records popped one by one with its bookkeeping done once
    /// (`pop_record`, `took_records`) leave the channel as takes of each do: the same records,
    /// the same credit to the same producer, and a half-taken buffer holds its credit.
    #[test]
    fn a_buffer_taken_at_once_is_taken_as_its_records() {
        let planes = [buffered_plane(), buffered_plane()].map(|mut p| {
            let now = Instant::ZERO;
            for (channel, seq) in [(C, 0), (C, 1), (C, 2)] {
                p.write(channel, record(seq));
                if p.current_full(channel) {
                    p.send_buffer(now, channel, Duration::ZERO).expect("credit");
                }
            }
            p.send_buffer(now, C, Duration::ZERO)
                .expect("the floating buffer");
            p.wait_for_credit(C);
            for _ in 0..3 {
                p.arrive(C);
            }
            p
        });
        let [mut one, mut batch] = planes;
        let by_takes: Vec<_> = (0..3).map(|_| one.take(C)).collect();
        assert_eq!(batch.left_of_buffer(C), 2);
        let first = [batch.pop_record(C), batch.pop_record(C)];
        let credit = batch.took_records(C, 2);
        assert_eq!(batch.left_of_buffer(C), 1);
        let last = batch.pop_record(C);
        assert_eq!(batch.took_records(C, 1), by_takes[2].1);
        let by_batch = [
            (Element::Record(first[0]), None),
            (Element::Record(first[1]), credit),
            (Element::Record(last), by_takes[2].1),
        ];
        assert_eq!(by_takes, by_batch);
        assert_eq!(
            by_takes[1].1,
            Some(C),
            "the recycled buffer wakes the waiting producer"
        );
        assert_eq!(batch.buffers_consumed(C), one.buffers_consumed(C));
    }

    /// F1.14 step 6: an unaligned barrier overtakes the current buffer, not what is on the
    /// wire; the buffer follows it when sent.
    #[test]
    fn an_unaligned_barrier_overtakes_the_current_buffer() {
        let mut p = buffered_plane();
        let now = Instant::ZERO;
        p.write(C, record(0));
        p.write(C, record(1));
        p.send_buffer(now, C, Duration::ZERO).expect("credit");
        p.write(C, record(2));
        p.push(now, C, Element::PriorityBarrier(1), Duration::ZERO);
        let sent = p.send_buffer(now, C, Duration::ZERO).expect("credit");
        assert_eq!((sent.first, sent.records), (3, 1));
        let order: Vec<Element> = (0..4).map(|i| p.element(C, i)).collect();
        assert_eq!(
            order,
            [record(0), record(1), Element::PriorityBarrier(1), record(2)]
        );
        assert_eq!(p.buffers_holding(C, 2), 1, "two records, one buffer");
        assert_eq!(p.buffers_holding(C, 3), 2);
    }

    /// A held channel keeps its arrivals for the release, in order; credit still counts what
    /// waits on the wire, so the producer is back-pressured as behind a stalled connection.
    #[test]
    fn a_hold_defers_arrivals_until_its_release() {
        let mut p = plane();
        assert!(!p.defer_if_held(C, 1), "nothing is held");
        p.hold(C);
        p.push(
            Instant::ZERO,
            C,
            Element::EndOfData(StopMode::Drain),
            Duration::ZERO,
        );
        p.push(Instant::ZERO, C, Element::EndOfPartition, Duration::ZERO);
        assert!(p.defer_if_held(C, 1));
        assert!(p.defer_if_held(C, 1));
        assert_eq!(p.buffered(C), 0, "nothing reached the consumer");
        assert_eq!(p.release(C), Some(2), "both arrivals waited");
        assert!(!p.defer_if_held(C, 1), "released");
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
        assert!(p.defer_if_held(C, 1));
        assert_eq!(p.release(C), None, "one hold is left");
        assert!(p.defer_if_held(C, 1), "still held");
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
        assert!(p.defer_if_held(C, 1));
        p.reset(C, Instant::ZERO);
        assert!(p.defer_if_held(C, 1), "the hold outlives the reset");
        assert_eq!(
            p.release(C),
            Some(1),
            "only the arrival after the reset waits"
        );
    }
}
