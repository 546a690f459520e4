//! The mutation score: for each injected bug, a bounded campaign with that bug, the number of
//! seeds until the bug's own oracle ([`Bug::caught_by`]) first fires, and the size of the
//! scenario that detection shrinks to. A bug no campaign detects means an oracle or the
//! generator is blind to the rule the bug breaks.

use super::campaign::{run_seed, CampaignOptions};
use super::generate::GenerateOptions;
use super::parallel_map;
use super::shrink::{shrink, Shrunk, Size, MAX_SHRINK_RUNS};
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
}

impl Mutant {
    pub fn shrunk_size(&self) -> Option<Size> {
        self.shrunk.as_ref().map(|s| Size::of(&s.document))
    }
}

/// Runs seeds `0..seeds` with `bug` injected until one violates the bug's invariant, then
/// shrinks it. Seeds go in batches of `threads`, and the first detection is the lowest seed of
/// the first batch with one, so the answer does not depend on `threads`.
pub fn score(bug: Bug, seeds: u64, threads: usize) -> Mutant {
    let options = CampaignOptions {
        seeds: 0..seeds,
        threads,
        generate: GenerateOptions {
            protocol: None,
            bug: Some(bug),
        },
        shard: None,
        time_limit: None,
        recheck: 0.0,
    };
    let target = bug.caught_by();
    let batch = threads.max(1) as u64;
    let mut start = 0;
    while start < seeds {
        let batch_seeds: Vec<u64> = (start..seeds.min(start + batch)).collect();
        let results = parallel_map(&batch_seeds, threads, || true, |&s| run_seed(s, &options));
        let detected = results
            .into_iter()
            .flatten()
            .find(|r| r.violated.contains(&target));
        if let Some(found) = detected {
            return Mutant {
                bug,
                detected_at: Some(found.seed),
                seeds_run: found.seed + 1,
                shrunk: shrink(found.seed, &options.generate, target, MAX_SHRINK_RUNS),
            };
        }
        start += batch;
    }
    Mutant {
        bug,
        detected_at: None,
        seeds_run: seeds,
        shrunk: None,
    }
}
