//! A campaign: generate, run and judge every seed of a range (or of one shard of it) across
//! threads, and gather one [`SeedResult`] per seed, in seed order.

use super::generate::{generate, GenerateOptions};
use super::isolate::{isolated, Panic};
use super::strategy::{Strategy, PCT_STREAM};
use super::{judge, parallel_map, run_document, scenario_hash, Outcome};
use crate::oracle::invariant::Invariant;
use crate::probes::{Probe, ProbeSet, StateCoverage};
use crate::run::{RunOptions, RunReport};
use crate::scenario::{Scenario, TieBreak};
use crate::trace::Retain;
use serde_json::{json, Value};
use sim::explore::Pct;
use sim::{Instant, RandomStreams, StopReason};
use std::ops::Range;
use std::time::{Duration, Instant as WallClock};

/// What a campaign runs.
#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub seeds: Range<u64>,
    pub threads: usize,
    pub generate: GenerateOptions,
    /// `(k, n)`: only the seeds `≡ k (mod n)`, so `n` machines can split a range and
    /// `flinksim merge` can join their JSON Lines files into the whole campaign's.
    pub shard: Option<(u64, u64)>,
    /// Start no seed after this much wall time.
    pub time_limit: Option<Duration>,
    /// The fraction of seeds (0 to 1) run a second time to check that the trace hash repeats.
    /// Which seeds is a function of the seed alone, so it is the same on any thread count.
    pub recheck: f64,
    /// How each seed's scenario is run: [`Strategy::Random`] or [`Strategy::Pct`]
    /// ([`Strategy::Exhaustive`] runs no seeds: `super::exhaustive`).
    pub strategy: Strategy,
}

/// What a PCT run of a seed was: PCT's `n` and `k`, and the choices that replay it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PctRun {
    /// Processes that had an event (PCT's `n`).
    pub actors: u64,
    /// Steps (PCT's `k`): events handled, and RPC arrivals postponed.
    pub steps: u64,
    /// The choice vector (`sim::explore::ChoiceLog`) and the RPC arrivals the change points
    /// postponed, `(step, nanoseconds)`: the scenario with [`PctRun::tie_break`] replays the
    /// run.
    pub choices: Vec<u32>,
    pub delays: Vec<(u64, u64)>,
}

impl PctRun {
    /// The scenario's `tie_break` that replays this run: `{"choices": …}`, or with postponed
    /// RPCs `{"schedule": {"choices": …, "delays": …}}`.
    pub fn tie_break(&self) -> Value {
        if self.delays.is_empty() {
            json!({ "choices": self.choices })
        } else {
            json!({ "schedule": { "choices": self.choices, "delays": self.delays } })
        }
    }
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
    /// Under [`Strategy::Pct`]: the run's `n`, `k` and choices.
    pub pct: Option<PctRun>,
}

impl SeedResult {
    /// The JSON Lines record of `--out/results.jsonl`.
    pub fn to_json(&self) -> Value {
        let mut line = json!({
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
        });
        // Only PCT lines have it, so a random campaign's lines stay as they were.
        if let Some(pct) = &self.pct {
            line["pct"] = json!({
                "actors": pct.actors,
                "steps": pct.steps,
                "choices": pct.choices,
            });
            if !pct.delays.is_empty() {
                line["pct"]["delays"] = json!(pct.delays);
            }
        }
        line
    }
}

impl SeedResult {
    /// Reads a line [`SeedResult::to_json`] wrote (`flinksim merge` reads the shards' lines
    /// back for the campaign summary); the error names the field that is wrong. A line without
    /// `probes` reads as having hit none.
    pub fn from_json(line: &Value) -> Result<SeedResult, String> {
        let field = |name: &str| line.get(name).ok_or(format!("no \"{name}\""));
        let number = |name: &str| {
            field(name)?
                .as_u64()
                .ok_or(format!("\"{name}\" is not a number"))
        };
        let text = |name: &str| {
            field(name)?
                .as_str()
                .ok_or(format!("\"{name}\" is not a string"))
        };
        let hash = |name: &str| {
            let t = text(name)?;
            t.strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or(format!(
                    "\"{name}\" is not a hash like 0x0123456789abcdef: {t:?}"
                ))
        };
        let ids = |name: &str| -> Result<Vec<&str>, String> {
            match line.get(name) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().ok_or(format!("\"{name}\" holds a non-string")))
                    .collect(),
                Some(_) => Err(format!("\"{name}\" is not a list")),
            }
        };
        let outcome = text("outcome")?;
        let outcome = [
            Outcome::Ok,
            Outcome::Violation,
            Outcome::Budget,
            Outcome::Panic,
        ]
        .into_iter()
        .find(|o| o.id() == outcome)
        .ok_or(format!("unknown outcome {outcome:?}"))?;
        let violated = ids("violations")?
            .into_iter()
            .map(|id| Invariant::from_id(id).ok_or(format!("unknown invariant {id:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut probes = ProbeSet::default();
        for id in ids("probes")? {
            let probe = Probe::ALL
                .into_iter()
                .find(|p| p.id() == id)
                .ok_or(format!("unknown probe {id:?}"))?;
            probes.insert(probe);
        }
        let stop = match line.get("stop") {
            None | Some(Value::Null) => None,
            Some(stop) => Some(
                [
                    StopReason::Done,
                    StopReason::Quiescent,
                    StopReason::EventBudget,
                    StopReason::TimeBudget,
                    StopReason::PendingBudget,
                    StopReason::WorkBudget,
                ]
                .into_iter()
                .find(|s| stop.as_str() == Some(crate::report::stop_id(*s)))
                .ok_or(format!("unknown stop {stop}"))?,
            ),
        };
        let panic = match line.get("panic") {
            None | Some(Value::Null) => None,
            Some(panic) => {
                let part = |name: &str| {
                    panic
                        .get(name)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or(format!("\"panic\" has no \"{name}\""))
                };
                Some(Panic {
                    location: part("location")?,
                    message: part("message")?,
                })
            }
        };
        let pct = match line.get("pct") {
            None | Some(Value::Null) => None,
            Some(pct) => {
                let count = |name: &str| {
                    pct.get(name)
                        .and_then(Value::as_u64)
                        .ok_or(format!("\"pct\" has no \"{name}\" number"))
                };
                let choices = pct
                    .get("choices")
                    .and_then(Value::as_array)
                    .ok_or("\"pct\" has no \"choices\" list")?
                    .iter()
                    .map(|c| {
                        c.as_u64()
                            .and_then(|c| u32::try_from(c).ok())
                            .ok_or("\"pct\" has a choice that is not a small number")
                    })
                    .collect::<Result<Vec<u32>, _>>()?;
                let delays = match pct.get("delays") {
                    None => Vec::new(),
                    Some(delays) => serde_json::from_value::<Vec<(u64, u64)>>(delays.clone())
                        .map_err(|_| "\"pct\" has \"delays\" that are not [step, ns] pairs")?,
                };
                Some(PctRun {
                    actors: count("actors")?,
                    steps: count("steps")?,
                    choices,
                    delays,
                })
            }
        };
        Ok(SeedResult {
            seed: number("seed")?,
            scenario_hash: hash("scenario_hash")?,
            outcome,
            violated,
            events: number("events")?,
            sim_time: Instant::from_nanos(number("sim_time_ns")?),
            trace_hash: hash("trace_hash")?,
            rechecked: field("rechecked")?
                .as_bool()
                .ok_or("\"rechecked\" is not true or false")?,
            probes,
            stop,
            panic,
            pct,
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

    /// The seeds whose run ended on a budget with no violation, in seed order, with the
    /// budget.
    pub fn budgets(&self) -> impl Iterator<Item = (&SeedResult, StopReason)> {
        self.results
            .iter()
            .filter(|r| r.outcome == Outcome::Budget)
            .filter_map(|r| r.stop.map(|stop| (r, stop)))
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
pub(crate) fn rechecked(seed: u64, fraction: f64) -> bool {
    fraction > 0.0 && (super::fnv1a(&seed.to_le_bytes()) as f64 / u64::MAX as f64) < fraction
}

/// Generates, runs and judges one seed. Generation and both runs are [`isolated`]: a panic in
/// any of them is this seed's result (`outcome: "panic"`), never the campaign's end.
pub fn run_seed(seed: u64, options: &CampaignOptions) -> SeedResult {
    let recheck = rechecked(seed, options.recheck);
    let pct = match options.strategy {
        Strategy::Random | Strategy::Guided | Strategy::Swarm => None,
        Strategy::Pct { depth } => Some(depth),
        Strategy::Exhaustive => {
            unreachable!("an exhaustive exploration runs one scenario, not seeds")
        }
    };
    run_judged(seed, recheck, pct, || generate(seed, &options.generate)).0
}

/// Runs and judges the scenario document `make` returns, recorded as `seed`'s result (a
/// guided campaign's inputs are documents, not seeds); with `recheck`, twice, comparing trace
/// hashes. Also returns the abstract protocol states the run went through, which a guided
/// campaign steers by and `results.jsonl` does not hold.
pub fn run_input(
    seed: u64,
    recheck: bool,
    make: impl FnOnce() -> Value,
) -> (SeedResult, StateCoverage) {
    run_judged(seed, recheck, None, make)
}

/// [`run_input`], under the PCT scheduler of depth `pct_depth` when it is given (seeded by `seed`).
fn run_judged(
    seed: u64,
    recheck: bool,
    pct_depth: Option<u32>,
    make: impl FnOnce() -> Value,
) -> (SeedResult, StateCoverage) {
    let mut document = Value::Null;
    let run = isolated(|| {
        document = make();
        let (scenario, report, pct) = match pct_depth {
            None => {
                let (scenario, report) =
                    run_document(&document, Retain::Nothing).unwrap_or_else(|e| {
                        panic!("seed {seed} generated an invalid scenario: {e}\n{document}")
                    });
                (scenario, report, None)
            }
            Some(depth) => {
                let scenario = crate::scenario::parse(&document.to_string(), "generated")
                    .unwrap_or_else(|e| {
                        panic!("seed {seed} generated an invalid scenario: {e}\n{document}")
                    });
                let (report, run) = run_pct(&scenario, seed, depth);
                (scenario, report, Some(run))
            }
        };
        let mut verdict = judge(&scenario, &report);
        if recheck {
            let again = match pct_depth {
                None => crate::run::run(
                    &scenario,
                    &crate::run::RunOptions {
                        seed: None,
                        retain: Retain::Nothing,
                        eager_sources: false,
                    },
                ),
                Some(depth) => run_pct(&scenario, seed, depth).0,
            };
            if again.trace_hash != report.trace_hash {
                verdict.violated.push(Invariant::Determinism);
                verdict.violated.sort();
                verdict.outcome = Outcome::Violation;
            }
        }
        (verdict, report, pct)
    });
    let scenario_hash = scenario_hash(&document);
    match run {
        Ok((verdict, report, pct)) => (
            SeedResult {
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
                pct,
            },
            report.states,
        ),
        Err(panic) => (
            SeedResult {
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
                pct: None,
            },
            StateCoverage::default(),
        ),
    }
}

/// One PCT run of `scenario` for `seed`: PCT needs `k` before the run to place its change
/// points, so the scenario first runs once in insertion order and its event count is `k`.
pub fn run_pct(scenario: &Scenario, seed: u64, depth: u32) -> (RunReport, PctRun) {
    let options = RunOptions {
        seed: None,
        retain: Retain::Nothing,
        eager_sources: false,
    };
    let mut plain = scenario.clone();
    plain.tie_break = TieBreak::Insertion;
    let steps = crate::run::run(&plain, &options).events;
    let mut pct = Pct::new(depth, steps, RandomStreams::new(seed).stream(PCT_STREAM));
    let report = crate::run::run_chosen(scenario, &options, &mut pct);
    let run = PctRun {
        actors: pct.actors(),
        steps: pct.steps(),
        choices: pct.log().vector(),
        delays: pct
            .log()
            .delays()
            .iter()
            .map(|d| (d.call, d.nanos))
            .collect(),
    };
    (report, run)
}

/// The first seed of the campaign whose result `fails`. Seeds go in batches of `threads`, and
/// the answer is the lowest failing seed of the first batch with one, so it does not depend on
/// `threads`. No time limit or shard applies.
pub fn first_failure(
    options: &CampaignOptions,
    fails: impl Fn(&SeedResult) -> bool + Sync,
) -> Option<u64> {
    let batch = options.threads.max(1);
    let seeds: Vec<u64> = options.seeds.clone().collect();
    seeds.chunks(batch).find_map(|chunk| {
        parallel_map(chunk, options.threads, || true, |&s| run_seed(s, options))
            .into_iter()
            .flatten()
            .find(&fails)
            .map(|r| r.seed)
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `merge` reads lines back: every field survives, whatever the outcome.
    #[test]
    fn a_seed_line_reads_back_as_written() {
        let options = CampaignOptions {
            seeds: 0..3,
            threads: 1,
            generate: GenerateOptions::default(),
            shard: None,
            time_limit: None,
            recheck: 1.0,
            strategy: Strategy::Random,
        };
        let mut results: Vec<SeedResult> = (0..3).map(|s| run_seed(s, &options)).collect();
        results[1].outcome = Outcome::Violation;
        results[1].violated = vec![Invariant::ConsistentCut, Invariant::Determinism];
        results[1].stop = Some(StopReason::PendingBudget);
        results[2].outcome = Outcome::Panic;
        results[2].stop = None;
        results[2].panic = Some(Panic {
            location: "src/x.rs:1:2".into(),
            message: "a \"quoted\" message".into(),
        });
        for r in results {
            let line = r.to_json().to_string();
            let back = SeedResult::from_json(&serde_json::from_str(&line).unwrap()).unwrap();
            assert_eq!(back, r);
            assert_eq!(back.to_json().to_string(), line);
        }
        let bad = json!({"seed": 1, "outcome": "fine"});
        assert!(SeedResult::from_json(&bad).is_err());
    }
}
