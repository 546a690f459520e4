//! `fuzz --strategy exhaustive`: a stateless model checker for one small scenario.
//!
//! Two things of a run are left open and explored:
//!
//! - **Message latencies**, discretised: every latency range of the scenario's `network`
//!   (`channel_latency`, `rpc_latency`, each `channels` entry) is fixed, in turn, to its
//!   minimum, midpoint and maximum (fewer when they coincide), one *latency variant* per
//!   combination, so `3^r` variants for `r` ranges. A fixed latency is the same for every
//!   message of its range: messages sent together arrive together, which is where ordering
//!   races live; a search over each message's latency would grow with the messages.
//! - **The order of same-instant events**, by a depth-first search over choice vectors with
//!   sleep sets (`sim::explore::Search`): each run is a re-execution from the start, fully
//!   determined by its choice vector. Events addressed to different actors (the JobMaster,
//!   each task: `World::actor`) are treated as independent, so one order per class of runs
//!   that differ only in the order of independent events is explored; of equal events (the
//!   next RPC of one link, twice) only the first is ever taken.
//!
//! Everything else (record values, processing times, fault plans) is as the scenario's seed
//! draws it. The result is a certificate, "N classes explored, 0 violations", with the bounds
//! it holds within, or the first counterexample: the scenario with the variant's latencies and
//! its `"tie_break": {"choices": …}`, which `flinksim run` replays.
//!
//! The independence of two actors' events is the model's approximation, stated here so a
//! certificate is read for what it is: actors share no state but the messages between them,
//! except that a data channel's credit is read by its producer and returned by its consumer,
//! that the tasks of one TaskManager share its RPC link to the JobMaster (two tasks' RPCs sent
//! in one instant are explored in one order), and that the oracles observe every event; an
//! order of two actors' events at one instant that only those would tell apart is not
//! explored.
//!
//! A pure function of the scenario and the bounds, whatever the thread count: the variants are
//! searched side by side in rounds of [`ROUND`] runs, each on one thread and alone, and the
//! first counterexample is the one with the fewest runs of its variant (then the lowest
//! variant). Only the time limit depends on the wall clock, and the output says when it cut
//! the search.

use super::isolate::{isolated, Panic};
use super::{judge, parallel_map, Outcome};
use crate::oracle::invariant::Invariant;
use crate::run::{run_chosen, RunOptions};
use crate::scenario::{self, DurationRange, ScenarioError};
use crate::trace::Retain;
use serde_json::{json, Value};
use sim::explore::Search;
use sim::Duration;
use std::sync::Mutex;
use std::time::{Duration as WallDuration, Instant as WallClock};

/// The limits of an exploration; reaching one is reported with the result, never silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Runs per latency variant.
    pub max_runs: u64,
    /// Branch points per run at which the search branches; past them a run takes the first
    /// event awake.
    pub max_depth: usize,
    /// Start no run after this much wall time.
    pub time_limit: Option<WallDuration>,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_runs: 100_000,
            max_depth: 1_000,
            time_limit: None,
        }
    }
}

/// One latency range of the scenario and the JSON path that sets it.
#[derive(Clone, Debug)]
struct Range {
    /// `network.channel_latency`, `network.rpc_latency`, `network.channels[i].latency`.
    path: String,
    points: Vec<Duration>,
}

/// Minimum, midpoint, maximum; fewer when they coincide.
fn points(range: DurationRange) -> Vec<Duration> {
    let (min, max) = (range.min.as_nanos(), range.max.as_nanos());
    let mut points = vec![min, min + (max - min) / 2, max];
    points.dedup();
    points.into_iter().map(Duration::from_nanos).collect()
}

/// One combination of fixed latencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// `(path, latency)` for every range, in the order of `ranges`.
    pub latencies: Vec<(String, Duration)>,
}

impl Variant {
    /// `channel_latency 1ms, rpc_latency 2ms`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .latencies
            .iter()
            .map(|(path, d)| format!("{} {d}", path.trim_start_matches("network.")))
            .collect();
        parts.join(", ")
    }

    /// `document` with this variant's latencies written in.
    fn apply(&self, document: &Value) -> Value {
        let mut document = document.clone();
        for (path, latency) in &self.latencies {
            let value = json!(latency.to_string());
            match path.strip_prefix("network.channels[") {
                Some(rest) => {
                    let index: usize = rest
                        .split(']')
                        .next()
                        .and_then(|i| i.parse().ok())
                        .expect("a path ranges() wrote");
                    document["network"]["channels"][index]["latency"] = value;
                }
                None => {
                    let field = path.trim_start_matches("network.");
                    document["network"][field] = value;
                }
            }
        }
        document
    }
}

/// The latency ranges of `scenario`, in the order variants list them.
fn ranges(scenario: &scenario::Scenario) -> Vec<Range> {
    let mut ranges = vec![
        Range {
            path: "network.channel_latency".into(),
            points: points(scenario.network.channel_latency),
        },
        Range {
            path: "network.rpc_latency".into(),
            points: points(scenario.network.rpc_latency),
        },
    ];
    for (i, channel) in scenario.network.channels.iter().enumerate() {
        ranges.push(Range {
            path: format!("network.channels[{i}].latency"),
            points: points(channel.latency),
        });
    }
    ranges
}

/// Every latency variant of `scenario`, the first range varying slowest.
pub fn variants(scenario: &scenario::Scenario) -> Vec<Variant> {
    let mut variants = vec![Variant {
        latencies: Vec::new(),
    }];
    for range in ranges(scenario) {
        let mut longer = Vec::with_capacity(variants.len() * range.points.len());
        for v in &variants {
            for &p in &range.points {
                let mut latencies = v.latencies.clone();
                latencies.push((range.path.clone(), p));
                longer.push(Variant { latencies });
            }
        }
        variants = longer;
    }
    variants
}

/// What one variant's search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantResult {
    pub variant: Variant,
    /// Runs that were the first of their class.
    pub classes: u64,
    /// Runs whose class had been explored already (blocked by their sleep set).
    pub redundant: u64,
    /// Some run had an alternative past the depth bound.
    pub cut_by_depth: bool,
    /// The search stopped on `max_runs` with classes left.
    pub cut_by_runs: bool,
    /// The search stopped on the time limit with classes left.
    pub cut_by_time: bool,
    pub counterexample: Option<Counterexample>,
}

/// A run that violated an invariant or panicked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The scenario with the variant's latencies and the run's choice vector as its
    /// `tie_break`: `flinksim run` replays the run.
    pub document: Value,
    /// The run of the variant it was, from 1.
    pub run: u64,
    pub violated: Vec<Invariant>,
    pub panic: Option<Panic>,
}

/// The whole exploration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exploration {
    /// Every variant, in order, with how far its search went.
    pub variants: Vec<VariantResult>,
    /// Variants in all.
    pub total_variants: usize,
    pub bounds: Bounds,
}

impl Exploration {
    pub fn classes(&self) -> u64 {
        self.variants.iter().map(|v| v.classes).sum()
    }

    pub fn runs(&self) -> u64 {
        self.variants.iter().map(|v| v.classes + v.redundant).sum()
    }

    /// The first counterexample, in variant order.
    pub fn counterexample(&self) -> Option<(&Variant, &Counterexample)> {
        self.variants
            .iter()
            .find_map(|v| v.counterexample.as_ref().map(|c| (&v.variant, c)))
    }

    /// Which bounds cut the search: `depth`, `runs`, `time`; empty for a complete search.
    pub fn cuts(&self) -> Vec<&'static str> {
        let mut cuts = Vec::new();
        if self.variants.iter().any(|v| v.cut_by_depth) {
            cuts.push("depth");
        }
        if self.variants.iter().any(|v| v.cut_by_runs) {
            cuts.push("runs");
        }
        if self.variants.iter().any(|v| v.cut_by_time) {
            cuts.push("time");
        }
        cuts
    }
}

/// Runs per variant in one round: the variants advance together, a round at a time, so a
/// counterexample in any of them is found after about as many runs as it takes that variant.
pub const ROUND: u64 = 256;

/// Explores `document` (a scenario file's JSON) within `bounds`, on `threads` threads.
pub fn explore(
    document: &Value,
    bounds: Bounds,
    threads: usize,
) -> Result<Exploration, ScenarioError> {
    let scenario = scenario::parse(&document.to_string(), "scenario")?;
    let variants = variants(&scenario);
    let started = WallClock::now();
    let in_time = || {
        bounds
            .time_limit
            .is_none_or(|limit| started.elapsed() < limit)
    };
    let searches: Vec<Mutex<VariantSearch>> = variants
        .iter()
        .map(|v| Mutex::new(VariantSearch::new(document, v, bounds)))
        .collect();
    // Round by round, every variant still searching takes up to ROUND runs (or stops at its
    // first counterexample); after a round with a counterexample, the first by (run, variant)
    // is the answer. Each variant's runs depend on it alone, so this is the same on any
    // number of threads.
    loop {
        let live: Vec<&Mutex<VariantSearch>> = searches.iter().filter(|s| lock(s).live()).collect();
        if live.is_empty() || !in_time() {
            break;
        }
        parallel_map(&live, threads, || true, |s| lock(s).round(&in_time));
        if searches
            .iter()
            .any(|s| lock(s).result.counterexample.is_some())
        {
            break;
        }
    }
    let mut results: Vec<VariantResult> = searches
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .finish(&in_time)
        })
        .collect();
    // The first counterexample by (run, variant) is kept; the others are dropped, as they
    // would not have been found had the search stopped there.
    let first = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.counterexample.as_ref().map(|c| (c.run, i)))
        .min();
    if let Some((_, winner)) = first {
        for (i, r) in results.iter_mut().enumerate() {
            if i != winner {
                r.counterexample = None;
            }
        }
    }
    Ok(Exploration {
        variants: results,
        total_variants: variants.len(),
        bounds,
    })
}

fn lock(search: &Mutex<VariantSearch>) -> std::sync::MutexGuard<'_, VariantSearch> {
    search.lock().unwrap_or_else(|e| e.into_inner())
}

/// One latency variant's search in progress.
struct VariantSearch {
    fixed: Value,
    scenario: scenario::Scenario,
    search: Search,
    runs: u64,
    done: bool,
    bounds: Bounds,
    result: VariantResult,
}

impl VariantSearch {
    fn new(document: &Value, variant: &Variant, bounds: Bounds) -> VariantSearch {
        let fixed = variant.apply(document);
        let scenario = scenario::parse(&fixed.to_string(), "scenario")
            .expect("fixing a latency range of a valid scenario keeps it valid");
        VariantSearch {
            fixed,
            scenario,
            search: Search::new(bounds.max_depth),
            runs: 0,
            done: false,
            bounds,
            result: VariantResult {
                variant: variant.clone(),
                classes: 0,
                redundant: 0,
                cut_by_depth: false,
                cut_by_runs: false,
                cut_by_time: false,
                counterexample: None,
            },
        }
    }

    fn live(&self) -> bool {
        !self.done && self.result.counterexample.is_none()
    }

    /// Up to [`ROUND`] more runs.
    fn round(&mut self, in_time: &(impl Fn() -> bool + Sync)) {
        let options = RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        };
        for _ in 0..ROUND {
            if self.runs == self.bounds.max_runs || !in_time() {
                return;
            }
            let Some(mut chooser) = self.search.next_run() else {
                self.done = true;
                return;
            };
            self.runs += 1;
            let scenario = &self.scenario;
            let run = isolated(|| {
                let report = run_chosen(scenario, &options, &mut chooser);
                judge(scenario, &report)
            });
            let (shape, log) = chooser.finish();
            self.result.cut_by_depth |= shape.cut_by_depth;
            if shape.redundant {
                self.result.redundant += 1;
            } else {
                self.result.classes += 1;
            }
            let (violated, panic) = match run {
                Ok(verdict) if verdict.outcome == Outcome::Violation => (verdict.violated, None),
                Ok(_) => continue,
                Err(panic) => (Vec::new(), Some(panic)),
            };
            let mut document = self.fixed.clone();
            document["tie_break"] = json!({ "choices": log.vector() });
            self.result.counterexample = Some(Counterexample {
                document,
                run: self.runs,
                violated,
                panic,
            });
            return;
        }
    }

    /// The result, with the bound that stopped an unfinished search.
    fn finish(mut self, in_time: &impl Fn() -> bool) -> VariantResult {
        if self.live() {
            if self.runs == self.bounds.max_runs {
                self.result.cut_by_runs = true;
            } else if !in_time() {
                self.result.cut_by_time = true;
            }
        }
        self.result
    }
}
