//! The mutation score: for each injected bug, a bounded campaign with that bug, the number of
//! seeds until the bug's own oracle ([`Bug::caught_by`]) first fires, and the size of the
//! scenario that detection shrinks to. A bug no campaign detects means an oracle or the
//! generator is blind to the rule the bug breaks.
//!
//! Each bug is scored twice: with the generator biased toward the shapes the bug needs (the
//! `Bias` of `generate.rs`), and with the plain generator a campaign without the bug uses. The
//! biased figure says an oracle *can* catch the bug; the plain one how soon an ordinary
//! campaign does, which is what a bug nobody planted meets.

use super::campaign::{first_failure, CampaignOptions};
use super::generate::GenerateOptions;
use super::shrink::{shrink, Shrunk, Size, Target, MAX_SHRINK_RUNS};
use crate::bug::Bug;

/// One bug's score.
pub struct Mutant {
    pub bug: Bug,
    /// The first seed (from 0) whose run violates `bug.caught_by()`.
    pub detected_at: Option<u64>,
    /// Seeds run, in order from 0, until detection or the budget.
    pub seeds_run: u64,
    /// The shrunk scenario of the first detection.
    pub shrunk: Option<Shrunk>,
    /// The first detecting seed of the plain (unbiased) generator, within the same budget.
    pub plain_detected_at: Option<u64>,
}

impl Mutant {
    pub fn shrunk_size(&self) -> Option<Size> {
        self.shrunk.as_ref().map(|s| Size::of(&s.document))
    }
}

/// The campaign options of `bug`'s mutation score, biased or plain.
fn options(bug: Bug, seeds: u64, threads: usize, unbiased: bool) -> CampaignOptions {
    CampaignOptions {
        seeds: 0..seeds,
        threads,
        generate: GenerateOptions {
            bug: Some(bug),
            unbiased,
            swarm: false,
            ..GenerateOptions::default()
        },
        shard: None,
        time_limit: None,
        recheck: 0.0,
        strategy: super::strategy::Strategy::Random,
    }
}

/// The first seed of `0..seeds` whose run, with `bug` injected, violates the bug's invariant,
/// whatever the thread count ([`first_failure`]).
pub fn first_detection(bug: Bug, seeds: u64, threads: usize, unbiased: bool) -> Option<u64> {
    first_failure(&options(bug, seeds, threads, unbiased), |r| {
        r.violated.contains(&bug.caught_by())
    })
}

/// [`first_detection`], biased and plain, then the shrinking of the biased detecting seed.
pub fn score(bug: Bug, seeds: u64, threads: usize) -> Mutant {
    let detected_at = first_detection(bug, seeds, threads, false);
    Mutant {
        plain_detected_at: first_detection(bug, seeds, threads, true),
        bug,
        detected_at,
        seeds_run: detected_at.map_or(seeds, |s| s + 1),
        shrunk: detected_at.and_then(|seed| {
            shrink(
                seed,
                &options(bug, seeds, threads, false).generate,
                &Target::Invariant(bug.caught_by()),
                MAX_SHRINK_RUNS,
            )
        }),
    }
}
