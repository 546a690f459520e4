//! How a campaign explores (issue 17): which runs it makes of what.
//!
//! - [`Strategy::Random`]: each seed draws a scenario (`generate`) and runs it under that
//!   scenario's own tie-break, insertion or shuffled. Uniform sampling: no guarantee, the
//!   cheapest run per seed, and the campaign every other strategy is measured against.
//! - [`Strategy::Pct`]: each seed draws the same scenario as under `random`, then runs it under
//!   the PCT scheduler (`sim::explore::Pct`), seeded by the seed. The "threads" are the actors
//!   an event is addressed to (the JobMaster and each task, `World::actor`), a "step" is one
//!   kernel event, and a priority change point moves the actor about to run below every
//!   other, so its events due at an instant wait behind everyone else's (its messages are
//!   delayed to the end of their instant) until a later change point. Each run finds a bug of
//!   depth `d` (one needing `d` orderings between actors) with probability at least
//!   `1/(n·k^(d−1))`, `n` actors and `k` steps. Streaming jobs only (batch jobs name no
//!   actors).
//! - [`Strategy::Exhaustive`]: no seeds: one scenario file, every class of same-instant orders
//!   (events of different actors commute) under each of a few fixed latencies
//!   ([`super::exhaustive`]).

/// A campaign's exploration strategy (`flinksim fuzz --strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Random,
    /// PCT with `depth − 1` priority change points per run.
    Pct {
        depth: u32,
    },
    Exhaustive,
}

impl Strategy {
    /// The name `--strategy` takes and `results.jsonl`'s header records.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct { .. } => "pct",
            Strategy::Exhaustive => "exhaustive",
        }
    }
}

/// The name of the random stream a PCT run of a seed draws its priorities and change points
/// from (`sim::RandomStreams`): apart from every stream the scenario's run draws.
pub const PCT_STREAM: &str = "pct";
