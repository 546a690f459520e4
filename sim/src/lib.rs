//! The deterministic kernel of flinksim. It knows nothing of Flink, JSON, files or the CLI.
//!
//! A run is a pure function of its inputs; this crate supplies the pieces that make that true:
//! integer virtual time, an event queue with a deterministic order for same-instant events,
//! random streams forked by name from one seed, a run loop that always stops (budgets), and a
//! trace hash that never changes between Rust versions.
//!
//! Module map:
//! - [`time`]: virtual time as integer nanoseconds ([`Instant`], [`Duration`]).
//! - [`queue`]: the pending events, ordered by time then by a [`TieBreak`] ([`EventQueue`]).
//! - [`rng`]: named random streams forked from one master seed ([`RandomStreams`], [`Stream`]),
//!   with our own, documented range reductions.
//! - [`explore`]: controlled runs: a [`Chooser`] picks among same-instant events by the
//!   [`Actor`] each is addressed to (choice vectors, PCT, a sleep-set search).
//! - [`prefetch`]: a cache hint a model gives for the event likely to come next.
//! - [`hugepages`]: vectors for large arrays, backed by transparent huge pages on Linux.
//! - [`run`]: the run loop ([`Simulation`]) driving a [`Model`] within a [`Budget`], and why it
//!   stopped ([`RunOutcome`], [`StopReason`]).
//! - [`trace`]: the stable running hash of a trace ([`TraceHasher`]).

pub mod explore;
pub mod hugepages;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod run;
pub mod time;
pub mod trace;

pub use explore::{Actor, Chooser};
pub use queue::{EventQueue, TieBreak};
pub use rng::{RandomStreams, Stream};
pub use run::{Budget, Model, RunOutcome, Scheduler, Simulation, StopReason};
pub use time::{Duration, Instant, ParseDurationError};
pub use trace::TraceHasher;
