//! A campaign: generate, run and judge every seed of a range (or of one shard of it) across
//! threads, and gather one [`SeedResult`] per seed, in seed order.

use super::generate::{generate, GenerateOptions};
use super::isolate::{isolated, Panic};
use super::{judge, parallel_map, run_document, scenario_hash, Outcome};
use crate::oracle::invariant::Invariant;
use crate::probes::{Probe, ProbeSet};
use crate::trace::Retain;
use serde_json::{json, Value};
use sim::{Instant, StopReason};
use std::ops::Range;
use std::time::{Duration, Instant as WallClock};

/// What a campaign runs.
#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub seeds: Range<u64>,
    pub threads: usize,
    pub generate: GenerateOptions,
    /// `(k, n)`: only the seeds `≡ k (mod n)`, so `n` machines can split a range and their JSON
    /// Lines files concatenate to the whole campaign's.
    pub shard: Option<(u64, u64)>,
    /// Start no seed after this much wall time.
    pub time_limit: Option<Duration>,
    /// The fraction of seeds (0 to 1) run a second time to check that the trace hash repeats.
    /// Which seeds is a function of the seed alone, so it is the same on any thread count.
    pub recheck: f64,
}

/// One seed's result: everything here is a function of the seed and the options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedResult {
    pub seed: u64,
    pub scenario_hash: u64,
    pub outcome: Outcome,
    /// Unexpected violations, each invariant once; `determinism` when a recheck disagreed.
    pub violated: Vec<Invariant>,
    pub events: u64,
    pub sim_time: Instant,
    pub trace_hash: u64,
    pub rechecked: bool,
    /// The coverage probes the run hit.
    pub probes: ProbeSet,
    /// Why the run stopped (which budget, for [`Outcome::Budget`]).
    pub stop: Option<StopReason>,
    /// For [`Outcome::Panic`]: where and why the model panicked.
    pub panic: Option<Panic>,
}

impl SeedResult {
    /// The JSON Lines record of `--out/results.jsonl`.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "seed",
            "seed": self.seed,
            "scenario_hash": format!("{:#018x}", self.scenario_hash),
            "outcome": self.outcome.id(),
            "violations": self.violated.iter().map(|i| i.id()).collect::<Vec<_>>(),
            "events": self.events,
            "sim_time": self.sim_time.to_string(),
            "sim_time_ns": self.sim_time.as_nanos(),
            "trace_hash": format!("{:#018x}", self.trace_hash),
            "rechecked": self.rechecked,
            "probes": self.probes.iter().map(Probe::id).collect::<Vec<_>>(),
            "stop": self.stop.map(crate::report::stop_id),
            "panic": self.panic.as_ref().map(|p| json!({
                "location": p.location,
                "message": p.message,
            })),
        })
    }
}

/// A finished campaign.
pub struct CampaignResult {
    /// In seed order; only the seeds that were started.
    pub results: Vec<SeedResult>,
    /// Seeds of the range (and shard) not started because the time limit passed.
    pub skipped: u64,
    pub wall: Duration,
}

impl CampaignResult {
    pub fn violations(&self) -> impl Iterator<Item = &SeedResult> {
        self.results
            .iter()
            .filter(|r| r.outcome == Outcome::Violation)
    }

    /// The seeds whose run panicked, in seed order.
    pub fn panics(&self) -> impl Iterator<Item = (&SeedResult, &Panic)> {
        self.results
            .iter()
            .filter_map(|r| r.panic.as_ref().map(|p| (r, p)))
    }

    /// Seeds per second per thread: the campaign's throughput, comparable across machines
    /// with different core counts.
    pub fn seeds_per_second_per_thread(&self, threads: usize) -> f64 {
        self.results.len() as f64 / self.wall.as_secs_f64().max(1e-9) / threads.max(1) as f64
    }
}

/// The seeds a campaign runs, in order.
pub fn seeds(options: &CampaignOptions) -> Vec<u64> {
    options
        .seeds
        .clone()
        .filter(|s| options.shard.is_none_or(|(k, n)| s % n == k))
        .collect()
}

/// Whether `seed` is among the `fraction` of seeds rechecked: its FNV-1a hash, as a fraction
/// of the hash space, is below `fraction`.
fn rechecked(seed: u64, fraction: f64) -> bool {
    fraction > 0.0 && (super::fnv1a(&seed.to_le_bytes()) as f64 / u64::MAX as f64) < fraction
}

/// Generates, runs and judges one seed. Generation and both runs are [`isolated`]: a panic in
/// any of them is this seed's result (`outcome: "panic"`), never the campaign's end.
pub fn run_seed(seed: u64, options: &CampaignOptions) -> SeedResult {
    let recheck = rechecked(seed, options.recheck);
    let mut document = Value::Null;
    let run = isolated(|| {
        document = generate(seed, &options.generate);
        let (scenario, report) = run_document(&document, Retain::Nothing).unwrap_or_else(|e| {
            panic!("seed {seed} generated an invalid scenario: {e}\n{document}")
        });
        let mut verdict = judge(&scenario, &report);
        if recheck {
            let again = crate::run::run(
                &scenario,
                &crate::run::RunOptions {
                    seed: None,
                    retain: Retain::Nothing,
                },
            );
            if again.trace_hash != report.trace_hash {
                verdict.violated.push(Invariant::Determinism);
                verdict.violated.sort();
                verdict.outcome = Outcome::Violation;
            }
        }
        (verdict, report)
    });
    let scenario_hash = scenario_hash(&document);
    match run {
        Ok((verdict, report)) => SeedResult {
            seed,
            scenario_hash,
            outcome: verdict.outcome,
            violated: verdict.violated,
            events: report.events,
            sim_time: report.sim_time,
            trace_hash: report.trace_hash,
            rechecked: recheck,
            probes: report.probes,
            stop: Some(report.stop),
            panic: None,
        },
        Err(panic) => SeedResult {
            seed,
            scenario_hash,
            outcome: Outcome::Panic,
            violated: Vec::new(),
            events: 0,
            sim_time: Instant::ZERO,
            trace_hash: 0,
            rechecked: recheck,
            probes: ProbeSet::default(),
            stop: None,
            panic: Some(panic),
        },
    }
}

/// Runs the campaign; `on_result` sees each result as it comes (in completion order, for a
/// progress display only).
pub fn run_campaign(
    options: &CampaignOptions,
    on_result: impl Fn(&SeedResult) + Sync,
) -> CampaignResult {
    let seeds = seeds(options);
    let started = WallClock::now();
    let in_time = || {
        options
            .time_limit
            .is_none_or(|limit| started.elapsed() < limit)
    };
    let results = parallel_map(&seeds, options.threads, in_time, |&seed| {
        let result = run_seed(seed, options);
        on_result(&result);
        result
    });
    let total = results.len() as u64;
    let results: Vec<SeedResult> = results.into_iter().flatten().collect();
    CampaignResult {
        skipped: total - results.len() as u64,
        results,
        wall: started.elapsed(),
    }
}
