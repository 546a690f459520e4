//! The hunt: for every injected bug (`crate::bug`) and every source mutant
//! (`crate::source_mutant`, in a build with the `source-mutants` feature), how many runs and
//! how much wall time each [`Strategy`] that runs generated seeds ([`Strategy::HUNTED`]:
//! `random`, `pct` at its default depth, `guided`) needs before its first failing run, side by
//! side. Under `pct` each seed's scenario runs under the PCT scheduler (`run_seed`), a batch
//! job's too, whose events are all one actor's (`World::actor`): PCT leaves them in order and
//! only postpones RPC arrivals.
//!
//! Every strategy uses the plain generator (no `Bias` toward the bug's shapes: what a campaign
//! meets for a bug nobody planted), starts from nothing (no corpus), and counts a run as failing
//! when it violates any invariant unexpectedly or panics, as `flinksim fuzz` reports it.
//!
//! Runs to a first failure are one draw of a wide (roughly geometric) distribution: a bug one
//! run in 500 shows may first fail at run 20 or at run 1,500. So each cell is the median of
//! several **trials**, trial `t` starting at seed `t * TRIAL_STRIDE` (its fresh seeds and
//! mutation draws all differ), and says in how many trials the strategy failed a run at all.
//! The runs are a function of the strategy, the target, the budget and the trial count alone;
//! the wall time is the machine's.

use super::campaign::{first_failure, CampaignOptions};
use super::generate::GenerateOptions;
use super::guided::{run_guided, Corpus};
use super::strategy::Strategy;
use super::Outcome;
use crate::bug::Bug;
use crate::source_mutant::{self, SourceMutant};
use std::ops::Range;
use std::time::{Duration, Instant as WallClock};

/// What a row of the hunt hunts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Injected(Bug),
    Source(SourceMutant),
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Injected(bug) => bug.name(),
            Target::Source(mutant) => mutant.name(),
        }
    }

    /// Every target this build can hunt: the injected bugs, then the source mutants when the
    /// build has them.
    pub fn all() -> Vec<Target> {
        let injected = Bug::ALL.into_iter().map(Target::Injected);
        let source = SourceMutant::ALL
            .into_iter()
            .filter(|_| source_mutant::ENABLED)
            .map(Target::Source);
        injected.chain(source).collect()
    }
}

/// Where trial `t`'s seeds begin: `t * TRIAL_STRIDE`, far past any budget.
pub const TRIAL_STRIDE: u64 = 1_000_000;

/// One strategy's result on one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Per trial, the runs up to and including the first failing one; `None`: none within the
    /// budget.
    pub trials: Vec<Option<u64>>,
    /// Wall time of all the trials.
    pub wall: Duration,
}

impl Cell {
    /// The median of the trials' runs to a failure, a trial without one counting as more
    /// than any (the lower median of an even count); `None` when that is such a trial.
    pub fn median(&self) -> Option<u64> {
        let mut runs = self.trials.clone();
        runs.sort_by_key(|r| r.unwrap_or(u64::MAX));
        runs.get(runs.len().saturating_sub(1) / 2)
            .copied()
            .flatten()
    }

    /// Trials with a failing run.
    pub fn found(&self) -> usize {
        self.trials.iter().flatten().count()
    }
}

/// Runs `strategy` on `target` in `trials` trials of at most `budget` runs each, each until its
/// first failing run.
pub fn hunt(strategy: Strategy, target: Target, budget: u64, trials: u64, threads: usize) -> Cell {
    let started = WallClock::now();
    let trials = (0..trials)
        .map(|t| {
            trial(
                strategy,
                target,
                t * TRIAL_STRIDE..t * TRIAL_STRIDE + budget,
                threads,
            )
        })
        .collect();
    Cell {
        trials,
        wall: started.elapsed(),
    }
}

/// One trial: the runs to the first failure among `seeds`, or `None`.
fn trial(strategy: Strategy, target: Target, seeds: Range<u64>, threads: usize) -> Option<u64> {
    let start = seeds.start;
    let options = CampaignOptions {
        seeds,
        threads,
        generate: GenerateOptions {
            bug: match target {
                Target::Injected(bug) => Some(bug),
                Target::Source(_) => None,
            },
            unbiased: true,
            swarm: strategy == Strategy::Swarm,
            ..GenerateOptions::default()
        },
        shard: None,
        time_limit: None,
        recheck: 0.0,
        strategy,
    };
    source_mutant::activate(match target {
        Target::Injected(_) => None,
        Target::Source(mutant) => Some(mutant),
    });
    let fails = |o: Outcome| matches!(o, Outcome::Violation | Outcome::Panic);
    let runs = match strategy {
        Strategy::Random | Strategy::Pct { .. } | Strategy::Swarm => {
            first_failure(&options, |r| fails(r.outcome)).map(|seed| seed - start + 1)
        }
        Strategy::Guided => run_guided(&options, &mut Corpus::default(), true, |_| {})
            .runs
            .iter()
            .position(|r| fails(r.result.outcome))
            .map(|i| i as u64 + 1),
        Strategy::Exhaustive => {
            unreachable!("an exhaustive exploration runs one scenario, not seeds: not hunted")
        }
    };
    source_mutant::activate(None);
    runs
}

/// How a strategy did against `random` on one row, as the table says it.
/// By the medians.
pub fn versus_random(random: &Cell, other: &Cell) -> &'static str {
    match (random.median(), other.median()) {
        (None, None) => "neither",
        (None, Some(_)) => "only it",
        (Some(_), None) => "only random",
        (Some(r), Some(o)) if o < r => "fewer runs",
        (Some(r), Some(o)) if o == r => "tie",
        (Some(_), Some(_)) => "more runs",
    }
}
