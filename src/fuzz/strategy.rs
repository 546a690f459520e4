//! How a campaign explores (issue 17): which runs it makes of what. Each strategy is a pure
//! function of the campaign's parameters (and, for `guided`, of the corpus it starts from):
//! the same runs on any thread count.
//!
//! - [`Strategy::Random`]: each seed draws a scenario (`generate`) and runs it under that
//!   scenario's own tie-break, insertion or shuffled. Uniform sampling: no guarantee, the
//!   cheapest run per seed, and the campaign every other strategy is measured against.
//! - [`Strategy::Pct`]: each seed draws the same scenario as under `random`, then runs it under
//!   the PCT scheduler (`sim::explore::Pct`), seeded by the seed. The "threads" are the actors
//!   an event is addressed to (the JobMaster and each task, `World::actor`), a "step" is one
//!   kernel event, and a priority change point moves the actor about to run below every
//!   other, so its events due at an instant wait behind everyone else's until a later change
//!   point. Each run finds a bug of depth `d` (one needing `d` orderings between actors) with
//!   probability at least `1/(n·k^(d−1))`, `n` actors and `k` steps. Each change point also
//!   postpones the next RPC arrival within its link's latency range (`Model::slack`), which
//!   the bound does not cover; in a batch job, whose events are all one actor's, that is
//!   all PCT changes.
//! - [`Strategy::Exhaustive`]: no seeds: one scenario file, every class of same-instant orders
//!   (events of different actors commute) under each of a few fixed latencies
//!   ([`super::exhaustive`]).
//! - [`Strategy::Swarm`]: swarm testing: each seed first draws a configuration that switches
//!   each optional feature of the generator on, off or leaves it to the generator's draw, then
//!   its scenario, run as under `random` ([`super::swarm`]).
//! - [`Strategy::Guided`]: feedback: inputs that reached new coverage (probes and abstract
//!   protocol states) join a corpus, and most new inputs are mutations of corpus entries
//!   ([`super::guided`]).
//!
//! `flinksim hunt` measures the strategies that run seeds side by side ([`super::hunt`]); a
//! new such strategy is a variant here, one in [`Strategy::HUNTED`] and one arm in
//! `hunt::trial`.

/// A campaign's exploration strategy (`flinksim fuzz --strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Random,
    /// PCT with `depth − 1` priority change points per run.
    Pct {
        depth: u32,
    },
    Exhaustive,
    Guided,
    Swarm,
}

/// The depth `fuzz --strategy pct` targets by default, and the one `flinksim hunt` runs.
pub const DEFAULT_PCT_DEPTH: u32 = 3;

impl Strategy {
    /// The strategies `flinksim hunt` measures, in the order of its columns: those that run
    /// generated seeds (`exhaustive` explores one scenario file).
    pub const HUNTED: [Strategy; 4] = [
        Strategy::Random,
        Strategy::Pct {
            depth: DEFAULT_PCT_DEPTH,
        },
        Strategy::Guided,
        Strategy::Swarm,
    ];

    /// The name `--strategy` takes, `results.jsonl`'s header records and the hunt table's
    /// column heading.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct { .. } => "pct",
            Strategy::Exhaustive => "exhaustive",
            Strategy::Guided => "guided",
            Strategy::Swarm => "swarm",
        }
    }
}

/// The name of the random stream a PCT run of a seed draws its priorities and change points
/// from (`sim::RandomStreams`): apart from every stream the scenario's run draws.
pub const PCT_STREAM: &str = "pct";
