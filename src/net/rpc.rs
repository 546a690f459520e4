//! The JobMaster↔TaskManager links of both kinds of job: per-direction FIFO order and latency.
//!
//! Like a channel, a link keeps its in-flight RPCs in a queue and the kernel event only says
//! "the next RPC on this link arrives": a seeded permutation of same-instant events may then
//! reorder deliveries across links, never within one.
//!
//! Both kinds of job send the same [`Rpc`](crate::trace::Rpc), a batch one wrapped with its
//! connection's epoch (`world::batch::Sent`), so the links are generic over what they carry
//! and never look inside. They also differ in two details of timing, kept as an [`RpcPolicy`]
//! so that every shipped scenario keeps its timings: which random stream latencies come from
//! and whether a fixed latency costs a draw, and whether two RPCs on a link may arrive at the
//! same instant.

use crate::scenario::DurationRange;
use crate::trace::Address;
use sim::{Duration, Instant, RandomStreams, Stream};
use std::collections::VecDeque;

/// How a kind of job draws RPC latencies and orders arrivals on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpcPolicy {
    /// Latencies from the `network.rpc` stream; a fixed latency costs no draw. An RPC may
    /// arrive at the same instant as the one before it on its link (the link's queue keeps
    /// them in order).
    Streaming,
    /// Latencies from the `rpc` stream, one draw per RPC sent even for a fixed latency; each
    /// RPC arrives at least 1 ns after the one before it on its link. A deliberate, temporary
    /// difference: it is how the batch world timed its messages before the two worlds shared
    /// their links, and the timed faults of the batch scenarios are placed against it.
    Batch,
}

/// An RPC on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Envelope<M> {
    pub sent_at: Instant,
    pub message: M,
    /// A TaskManager's send number (P3.3 keeps refused RPCs in send order); 0 for what the
    /// JobMaster sends.
    pub seq: u64,
    /// The destination process's incarnation when it was sent: a restarted process never
    /// gets it.
    pub to_incarnation: u32,
    /// The sender's incarnation (its fencing token, or the process that must still be alive
    /// for its connection to carry the RPC).
    pub from_incarnation: u32,
}

pub struct RpcLinks<M> {
    links: Vec<Link<M>>,
    latency: DurationRange,
    rng: Stream,
    policy: RpcPolicy,
}

struct Link<M> {
    in_flight: VecDeque<Envelope<M>>,
    last_arrival: Instant,
}

/// One direction of one JobMaster↔TaskManager connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LinkId(u32);

impl LinkId {
    /// `2·tm` is JobMaster → TaskManager `tm`, `2·tm + 1` the way back.
    pub fn between(from: Address, to: Address) -> LinkId {
        match (from, to) {
            (Address::JobMaster, Address::TaskManager(tm)) => LinkId(2 * tm),
            (Address::TaskManager(tm), Address::JobMaster) => LinkId(2 * tm + 1),
            _ => unreachable!("RPCs run between the JobMaster and TaskManagers: {from:?} → {to:?}"),
        }
    }

    pub fn from(self) -> Address {
        if self.0 % 2 == 0 {
            Address::JobMaster
        } else {
            Address::TaskManager(self.0 / 2)
        }
    }

    pub fn to(self) -> Address {
        if self.0 % 2 == 0 {
            Address::TaskManager(self.0 / 2)
        } else {
            Address::JobMaster
        }
    }

    /// The TaskManager at one end.
    pub fn task_manager(self) -> u32 {
        self.0 / 2
    }
}

impl<M: Copy> RpcLinks<M> {
    pub fn new(
        task_managers: u32,
        latency: DurationRange,
        streams: &RandomStreams,
        policy: RpcPolicy,
    ) -> RpcLinks<M> {
        let stream = match policy {
            RpcPolicy::Streaming => "network.rpc",
            RpcPolicy::Batch => "rpc",
        };
        RpcLinks {
            links: (0..2 * task_managers)
                .map(|_| Link {
                    in_flight: VecDeque::new(),
                    last_arrival: Instant::ZERO,
                })
                .collect(),
            latency,
            rng: streams.stream(stream),
            policy,
        }
    }

    /// The RPCs on `link`, oldest first.
    pub fn in_flight(&self, link: LinkId) -> impl Iterator<Item = &Envelope<M>> + '_ {
        self.links[link.0 as usize].in_flight.iter()
    }

    /// The RPCs still on their way from TaskManager `tm` to the JobMaster.
    pub fn in_flight_from(&self, tm: u32) -> impl Iterator<Item = M> + '_ {
        let link = LinkId::between(Address::TaskManager(tm), Address::JobMaster);
        self.in_flight(link).map(|e| e.message)
    }

    /// Sends `message`, numbered `seq` by its sender, on `link` now, from the sender's
    /// incarnation `sender` to the destination's incarnation `incarnation`; returns when it
    /// arrives (the caller schedules that). `extra` is added latency (a delay spike, or the
    /// retry of a lost RPC).
    pub fn send(
        &mut self,
        now: Instant,
        link: LinkId,
        seq: u64,
        message: M,
        (sender, incarnation): (u32, u32),
        extra: Duration,
    ) -> Instant {
        let (latency, earliest) = {
            let last = self.links[link.0 as usize].last_arrival;
            match self.policy {
                RpcPolicy::Streaming => (super::draw(&mut self.rng, self.latency), last),
                RpcPolicy::Batch => (
                    self.rng
                        .duration_between(self.latency.min, self.latency.max),
                    last + Duration::from_nanos(1),
                ),
            }
        };
        let l = &mut self.links[link.0 as usize];
        let arrival = (now + latency + extra).max(earliest);
        l.last_arrival = arrival;
        l.in_flight.push_back(Envelope {
            sent_at: now,
            message,
            seq,
            to_incarnation: incarnation,
            from_incarnation: sender,
        });
        arrival
    }

    /// How much later than `now` the oldest RPC on `link`, due now, could arrive within the
    /// latency range: a controlled run may postpone its arrival by up to this much
    /// (`fuzz --strategy pct`). The link's order stays: an arrival event delivers whichever
    /// RPC is oldest on the link when it happens, so postponing one arrival past the next
    /// delivers the older RPC at the earlier instant, both within their ranges. Zero with
    /// none on the link, or past the range already (a delay spike).
    pub fn slack(&self, now: Instant, link: LinkId) -> Duration {
        self.in_flight(link)
            .next()
            .map_or(Duration::ZERO, |oldest| {
                oldest
                    .sent_at
                    .saturating_add(self.latency.max)
                    .saturating_duration_since(now)
            })
    }

    /// The oldest in-flight RPC on `link` arrives.
    pub fn deliver(&mut self, link: LinkId) -> Envelope<M> {
        self.links[link.0 as usize]
            .in_flight
            .pop_front()
            .expect("an arrival event per RPC sent")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrivals(policy: RpcPolicy, latency: DurationRange) -> Vec<u64> {
        let streams = RandomStreams::new(7);
        let mut links = RpcLinks::<u32>::new(1, latency, &streams, policy);
        let link = LinkId::between(Address::TaskManager(0), Address::JobMaster);
        (0..4)
            .map(|i| {
                let at = links.send(Instant::ZERO, link, 0, i, (0, 0), Duration::ZERO);
                at.as_nanos()
            })
            .collect()
    }

    #[test]
    fn a_fixed_latency_ties_in_streaming_and_is_spaced_in_batch() {
        let fixed = DurationRange {
            min: Duration::from_micros(5),
            max: Duration::from_micros(5),
        };
        assert_eq!(arrivals(RpcPolicy::Streaming, fixed), [5_000; 4]);
        assert_eq!(
            arrivals(RpcPolicy::Batch, fixed),
            [5_000, 5_001, 5_002, 5_003]
        );
    }

    #[test]
    fn arrivals_on_a_link_never_go_back_in_time_and_leave_in_send_order() {
        let range = DurationRange {
            min: Duration::from_micros(1),
            max: Duration::from_micros(900),
        };
        for policy in [RpcPolicy::Streaming, RpcPolicy::Batch] {
            let a = arrivals(policy, range);
            assert!(a.windows(2).all(|w| w[0] <= w[1]), "{policy:?}: {a:?}");
        }
        let streams = RandomStreams::new(1);
        let mut links = RpcLinks::<u32>::new(2, range, &streams, RpcPolicy::Batch);
        let link = LinkId::between(Address::JobMaster, Address::TaskManager(1));
        for i in 0..3 {
            links.send(Instant::ZERO, link, u64::from(i), i, (4, 9), Duration::ZERO);
        }
        let got: Vec<(u32, u64, u32, u32)> = (0..3)
            .map(|_| {
                let e = links.deliver(link);
                (e.message, e.seq, e.from_incarnation, e.to_incarnation)
            })
            .collect();
        assert_eq!(got, [(0, 0, 4, 9), (1, 1, 4, 9), (2, 2, 4, 9)]);
        assert_eq!(link.task_manager(), 1);
        assert_eq!(links.in_flight(link).count(), 0);
    }
}
