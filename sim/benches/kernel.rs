//! The kernel's overhead against the fastest thing it could be: a bare binary heap.
//!
//! Both loops run the classic "hold model": with `pending` events queued, repeatedly take the
//! earliest one and schedule one new event a pseudo-random 1..=1000ns after it, so the queue
//! size holds steady. (a) does this on a `BinaryHeap<Reverse<(time, seq)>>` by hand; (b) does it
//! through `Simulation::run` with a model whose handler schedules one event. The increments come
//! from the same xorshift64 sequence in both, so both heaps see the same workload. Each
//! measurement is repeated and the best kept, to report the code's speed rather than the noise
//! of the machine. Run with `cargo bench -p sim`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant as WallClock;

use sim::{Budget, Duration, Instant, Model, Scheduler, Simulation, TieBreak};

const PENDING_SIZES: [usize; 6] = [16, 256, 4096, 65536, 1 << 20, 1 << 22];
const EVENTS_PER_MEASUREMENT: u64 = 3_000_000;
const REPEATS: usize = 5;
const XORSHIFT_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Marsaglia's xorshift64: cheap enough not to dominate the loop being measured.
struct XorShift64(u64);

impl XorShift64 {
    #[inline]
    fn next_increment_ns(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        1 + x % 1000
    }
}

/// Events per second of the bare-heap hold model, best of [`REPEATS`].
fn bare_heap(pending: usize) -> f64 {
    best_rate(|| {
        let mut rng = XorShift64(XORSHIFT_SEED);
        let mut heap = BinaryHeap::with_capacity(pending);
        let mut seq = 0u64;
        for _ in 0..pending {
            heap.push(Reverse((rng.next_increment_ns(), seq)));
            seq += 1;
        }
        let start = WallClock::now();
        for _ in 0..EVENTS_PER_MEASUREMENT {
            let Reverse((now, _)) = heap.pop().expect("the hold model never drains");
            heap.push(Reverse((now + rng.next_increment_ns(), seq)));
            seq += 1;
        }
        let elapsed = start.elapsed();
        black_box(&heap);
        elapsed
    })
}

/// The hold model as a [`Model`]: every event schedules its successor.
struct Hold {
    rng: XorShift64,
}

impl Model for Hold {
    type Event = ();

    #[inline]
    fn handle(&mut self, _now: Instant, _event: (), sched: &mut Scheduler<'_, ()>) {
        sched.after(Duration::from_nanos(self.rng.next_increment_ns()), ());
    }
}

/// Events per second of the hold model through [`Simulation::run`], best of [`REPEATS`].
fn sim_kernel(pending: usize) -> f64 {
    best_rate(|| {
        let mut model = Hold {
            rng: XorShift64(XORSHIFT_SEED),
        };
        let mut sim = Simulation::new(TieBreak::Insertion);
        for _ in 0..pending {
            sim.schedule(Instant::from_nanos(model.rng.next_increment_ns()), ());
        }
        let budget = Budget {
            max_events: EVENTS_PER_MEASUREMENT,
            ..Budget::UNLIMITED
        };
        let start = WallClock::now();
        let outcome = sim.run(black_box(&mut model), budget);
        let elapsed = start.elapsed();
        assert_eq!(outcome.events, EVENTS_PER_MEASUREMENT);
        black_box(&sim);
        elapsed
    })
}

fn best_rate(mut measure: impl FnMut() -> std::time::Duration) -> f64 {
    let best = (0..REPEATS)
        .map(|_| measure())
        .min()
        .expect("REPEATS is not zero");
    EVENTS_PER_MEASUREMENT as f64 / best.as_secs_f64()
}

fn main() {
    println!("hold model, {EVENTS_PER_MEASUREMENT} events per measurement, best of {REPEATS}\n");
    println!("| pending | bare BinaryHeap (M events/s) | sim kernel (M events/s) | ratio |");
    println!("| ---: | ---: | ---: | ---: |");
    for pending in PENDING_SIZES {
        let bare = bare_heap(pending);
        let kernel = sim_kernel(pending);
        println!(
            "| {pending} | {:.1} | {:.1} | {:.2} |",
            bare / 1e6,
            kernel / 1e6,
            kernel / bare
        );
    }
}
