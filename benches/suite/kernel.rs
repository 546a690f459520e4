//! The kernel against the fastest thing it could be (a bare binary heap) and against a peer
//! (nexosim), on the classic "hold model": with `pending` events queued, repeatedly take the
//! earliest one and schedule one new event a pseudo-random 1..=1000ns after it, so the queue
//! size holds steady. The increments come from the same xorshift64 sequence everywhere.
//!
//! - bare: a `BinaryHeap<Reverse<(time, seq)>>` loop written by hand (as sim/benches/kernel.rs);
//! - kernel: `sim::Simulation::run` with a model whose handler schedules one event;
//! - nexosim: a nexosim model whose schedulable method reschedules itself through its
//!   `Context`, stepped on one executor thread (`SimInit::with_num_threads(1)`), the events
//!   counted by the model.

use super::{best_of, millions, verdict, Table};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant as WallClock;

const PENDING_SIZES: [usize; 5] = [16, 4096, 65536, 1 << 20, 1 << 22];
const EVENTS: u64 = 3_000_000;
const REPEATS: usize = 5;
const XORSHIFT_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Marsaglia's xorshift64: cheap enough not to dominate the loop being measured.
#[inline]
fn next_increment_ns(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    1 + x % 1000
}

/// Events per second of the bare-heap hold model.
pub fn bare_heap(pending: usize) -> f64 {
    let best = best_of(REPEATS, || {
        let mut rng = XORSHIFT_SEED;
        let mut heap = BinaryHeap::with_capacity(pending);
        let mut seq = 0u64;
        for _ in 0..pending {
            heap.push(Reverse((next_increment_ns(&mut rng), seq)));
            seq += 1;
        }
        let start = WallClock::now();
        for _ in 0..EVENTS {
            let Reverse((now, _)) = heap.pop().expect("the hold model never drains");
            heap.push(Reverse((now + next_increment_ns(&mut rng), seq)));
            seq += 1;
        }
        let elapsed = start.elapsed();
        black_box(&heap);
        elapsed
    });
    EVENTS as f64 / best
}

struct Hold {
    rng: u64,
}

impl sim::Model for Hold {
    type Event = ();

    #[inline]
    fn handle(&mut self, _now: sim::Instant, _event: (), sched: &mut sim::Scheduler<'_, ()>) {
        sched.after(
            sim::Duration::from_nanos(next_increment_ns(&mut self.rng)),
            (),
        );
    }
}

/// Events per second of the hold model through `sim::Simulation::run`.
pub fn sim_kernel(pending: usize) -> f64 {
    let best = best_of(REPEATS, || {
        let mut model = Hold { rng: XORSHIFT_SEED };
        let mut simulation = sim::Simulation::new(sim::TieBreak::Insertion);
        for _ in 0..pending {
            let at = sim::Instant::from_nanos(next_increment_ns(&mut model.rng));
            simulation.schedule(at, ());
        }
        let budget = sim::Budget {
            max_events: EVENTS,
            ..sim::Budget::UNLIMITED
        };
        let start = WallClock::now();
        let outcome = simulation.run(black_box(&mut model), budget);
        let elapsed = start.elapsed();
        assert_eq!(outcome.events, EVENTS);
        black_box(&simulation);
        elapsed
    });
    EVENTS as f64 / best
}

mod nexosim_hold {
    use super::{next_increment_ns, AtomicU64, Ordering};
    use nexosim::model::{schedulable, Context, Model};
    use serde::{Deserialize, Serialize};
    use std::time::Duration;

    /// Events handled by [`NxHold::fire`], over every simulation of the process.
    pub static HANDLED: AtomicU64 = AtomicU64::new(0);

    #[derive(Serialize, Deserialize)]
    pub struct NxHold {
        pub rng: u64,
        pub pending: usize,
    }

    #[Model]
    impl NxHold {
        #[nexosim(init)]
        async fn init(&mut self, cx: &Context<Self>, _: &mut ()) {
            for _ in 0..self.pending {
                let delay = Duration::from_nanos(next_increment_ns(&mut self.rng));
                cx.schedule_event(delay, schedulable!(Self::fire), ())
                    .expect("a delay of at least 1ns is in the future");
            }
        }

        /// One event of the hold model: schedules its successor.
        #[nexosim(schedulable)]
        async fn fire(&mut self, _: (), cx: &Context<Self>) {
            HANDLED.fetch_add(1, Ordering::Relaxed);
            let delay = Duration::from_nanos(next_increment_ns(&mut self.rng));
            cx.schedule_event(delay, schedulable!(Self::fire), ())
                .expect("a delay of at least 1ns is in the future");
        }
    }
}

/// Events per second of the hold model in nexosim. `step` handles every event of the next
/// instant, so a measurement may overshoot [`EVENTS`] by a few; the rate uses the true count.
pub fn nexosim(pending: usize) -> f64 {
    use nexosim::simulation::{Mailbox, SimInit};
    use nexosim::time::MonotonicTime;
    let mut best = f64::INFINITY;
    for _ in 0..REPEATS {
        let model = nexosim_hold::NxHold {
            rng: XORSHIFT_SEED,
            pending,
        };
        let mut simulation = SimInit::with_num_threads(1)
            .add_model(model, Mailbox::new(), "hold")
            .init(MonotonicTime::EPOCH)
            .expect("the hold model initializes");
        let first = nexosim_hold::HANDLED.load(Ordering::Relaxed);
        let start = WallClock::now();
        while nexosim_hold::HANDLED.load(Ordering::Relaxed) - first < EVENTS {
            simulation.step().expect("the hold model steps");
        }
        let elapsed = start.elapsed().as_secs_f64();
        let handled = nexosim_hold::HANDLED.load(Ordering::Relaxed) - first;
        best = best.min(elapsed / handled as f64);
    }
    1.0 / best
}

pub fn rows(table: &mut Table) {
    for pending in PENDING_SIZES {
        let bare = bare_heap(pending);
        let kernel = sim_kernel(pending);
        let nexosim = nexosim(pending);
        let what = format!("hold model, {pending} pending: events/s");
        // Issue 18: from 2^20 pending the radix heap must beat the bare heap twice over.
        let target = if pending >= 1 << 20 { 2.0 } else { 0.8 };
        table.row(
            "kernel",
            format!("{what}, bare BinaryHeap"),
            millions(bare),
            "1.00× (reference)",
        );
        table.row(
            "kernel",
            format!("{what}, sim kernel"),
            millions(kernel),
            format!(
                "{:.2}× bare (target ≥ {target}: {}), {:.1}× nexosim (target > 1: {})",
                kernel / bare,
                verdict(kernel / bare >= target),
                kernel / nexosim,
                verdict(kernel > nexosim)
            ),
        );
        table.row(
            "kernel",
            format!("{what}, nexosim 1.0 (1 thread)"),
            millions(nexosim),
            format!("{:.2}× bare", nexosim / bare),
        );
    }
}
