//! `fuzz --strategy guided`: feedback instead of uniform sampling. Every input whose run
//! reaches coverage no earlier input reached joins a **corpus**, and most later inputs are
//! **mutations** of corpus entries: a fault moved in time or retargeted, latencies scaled,
//! record counts changed, a fault added or removed, the run's seed (its latencies and
//! tie-breaks) redrawn. A run that reached a rare situation is thus varied around it, where a
//! neighbouring rare situation, and the bugs that hide there, are likelier than in a fresh
//! scenario.
//!
//! Coverage is [`features`]: the probes a run hit (`crate::probes`), the abstract protocol
//! states (checkpoint phase × finished set × fault phase) it entered, and the transitions
//! between them ([`crate::probes::StateCoverage`]).
//!
//! **What pays.** How many of a generation's inputs are fresh seeds follows the yield so far
//! of each kind (how often it joined the corpus, `Yields`), and an entry whose mutants joined
//! the corpus is drawn as a parent more often (`Entry::fruitful_children`): a campaign spends
//! its runs where they have found new coverage. Measured with `flinksim hunt` on sixteen rows
//! where random needs 50 to 2,000 runs (README, "Exploration strategies and the hunt").
//!
//! **Determinism.** Inputs run in generations of [`GENERATION`]. A generation is planned from
//! the corpus as it was when the generation began (parent picks and mutations are drawn from
//! the input's number alone), its runs are spread over threads, and their results are merged
//! into the corpus in input order. So the campaign is a pure function of its parameters and of
//! the corpus it starts from, on any thread count; only `--time-limit` (checked between
//! generations) makes it depend on the wall clock, by how many generations it runs.
//!
//! **Persistence.** The corpus is a folder of scenario files, `OUT/corpus/000000.json` on,
//! each one a complete scenario `flinksim run` takes, saved without its `bug` (a campaign
//! injects its own). A campaign with the same `--out` starts from the files there, in name
//! order, after running each to learn its coverage; a scenario file of one's own dropped in the
//! folder is an input like the others.

use super::campaign::{rechecked, run_input, CampaignOptions, SeedResult};
use super::generate::generate;
use super::{parallel_map, Outcome};
use crate::probes::{ProbeSet, StateCoverage};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant as WallClock};

/// Inputs per generation: the corpus changes only between generations. Fixed, not the thread
/// count, so the campaign does not depend on it.
pub const GENERATION: usize = 32;

/// Caps on what mutations compound to, generation after generation: a child of a child of a
/// scenario whose records doubled, latencies quadrupled or faults grew would otherwise run
/// ever longer and hold ever more in flight. They sit above what the generator draws (300
/// records, 5 ms latencies, 3 swarm faults plus 3 others).
pub const MAX_RECORDS: u64 = 1000;
pub const MAX_LATENCY_NS: u64 = 50_000_000;
pub const MAX_FAULTS: usize = 8;
/// The shortest checkpoint interval a mutation makes (the generator's shortest is 1 ms).
pub const MIN_INTERVAL_NS: u64 = 1_000_000;

/// Attempts at a valid mutation of a parent before an input falls back to redrawing its seed
/// alone (always valid).
const MUTATION_ATTEMPTS: u32 = 8;

/// The coverage features of one run, as sorted numbers: probe `p` is `p`, abstract state `s`
/// is `64 + s`, the transition from state `a` to `b` is `128 + 64 a + b`.
pub fn features(probes: ProbeSet, states: &StateCoverage) -> Vec<u32> {
    probes
        .iter()
        .map(|p| p as u32)
        .chain(states.states().map(|s| 64 + s))
        .chain(states.transitions().map(|t| 128 + t))
        .collect()
}

/// One way to change a scenario document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// A fault's `at` instant (with its `release_at`) scaled or redrawn within the fault window.
    FaultTime,
    /// A fault's predicate (checkpoint id, subtask), or the task it hits, changed.
    FaultTarget,
    /// A latency, pace or processing-time range scaled by 1/4 to 4.
    Latency,
    /// A source subtask's record count changed (to 0, one less or more, half, double, or any).
    Records,
    /// The scenario's `seed` redrawn, so every latency and tie-break draw of the run changes.
    TieBreakSeed,
    /// The checkpoint interval scaled, or an explicit trigger moved.
    Checkpointing,
    /// A task failure, JobManager crash or lost TaskManager added within the fault window.
    AddFault,
    /// A fault removed.
    RemoveFault,
}

impl Mutation {
    pub const ALL: [Mutation; 8] = [
        Mutation::FaultTime,
        Mutation::FaultTarget,
        Mutation::Latency,
        Mutation::Records,
        Mutation::TieBreakSeed,
        Mutation::Checkpointing,
        Mutation::AddFault,
        Mutation::RemoveFault,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutation::FaultTime => "fault_time",
            Mutation::FaultTarget => "fault_target",
            Mutation::Latency => "latency",
            Mutation::Records => "records",
            Mutation::TieBreakSeed => "tie_break_seed",
            Mutation::Checkpointing => "checkpointing",
            Mutation::AddFault => "add_fault",
            Mutation::RemoveFault => "remove_fault",
        }
    }
}

/// Where an input came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The generator's scenario for this seed.
    Seed(u64),
    /// Corpus entry `parent` with these mutations applied in order.
    Mutated {
        parent: usize,
        mutations: Vec<Mutation>,
    },
    /// A scenario file found in the corpus folder.
    File(String),
}

impl Origin {
    pub fn to_json(&self) -> Value {
        match self {
            Origin::Seed(seed) => json!({"seed": seed}),
            Origin::Mutated { parent, mutations } => json!({
                "parent": parent,
                "mutations": mutations.iter().map(|m| m.name()).collect::<Vec<_>>(),
            }),
            Origin::File(name) => json!({"file": name}),
        }
    }
}

/// One corpus entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The scenario, with the campaign's `bug` (or none).
    pub document: Value,
    pub origin: Origin,
    /// How many features no earlier entry had.
    pub new_features: usize,
    /// Its run's features ([`features`]).
    features: Vec<u32>,
    /// Its mutants that joined the corpus: an entry whose neighbourhood keeps paying is
    /// mutated more ([`Corpus::weights`]). Counted by each campaign anew (not saved).
    fruitful_children: u64,
}

/// The inputs that reached new coverage, and the union of their features.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub entries: Vec<Entry>,
    seen: BTreeSet<u32>,
    /// Per feature, how many runs of this campaign (and of loading) had it: a rare feature
    /// marks a rare situation, and entries that reach one are mutated more often
    /// ([`Corpus::weights`]).
    hits: BTreeMap<u32, u64>,
    /// Entries read from the corpus folder; the rest are this campaign's.
    pub loaded: usize,
}

impl Corpus {
    /// Features seen so far.
    pub fn features(&self) -> usize {
        self.seen.len()
    }

    /// Counts a run's features.
    fn count(&mut self, features: &[u32]) {
        for &f in features {
            *self.hits.entry(f).or_default() += 1;
        }
    }

    /// Each entry's weight as a parent: inversely proportional to the count of its rarest
    /// feature, so the corpus is mutated mostly around the situations runs reach least, and
    /// multiplied by one plus its mutants that joined the corpus (at most [`MAX_ENERGY`] of
    /// them), so an entry whose neighbourhood keeps yielding new coverage gets more energy.
    fn weights(&self) -> Vec<u64> {
        self.entries
            .iter()
            .map(|e| {
                let rarest = e
                    .features
                    .iter()
                    .map(|f| self.hits.get(f).copied().unwrap_or(1))
                    .min()
                    .unwrap_or(u64::MAX);
                let base = (1u64 << 20) / rarest.max(1) + 1;
                base * (1 + e.fruitful_children.min(MAX_ENERGY))
            })
            .collect()
    }

    /// Adds the input when it has a feature no entry had; says whether it did.
    fn admit(
        &mut self,
        document: impl FnOnce() -> Value,
        origin: Origin,
        features: &[u32],
    ) -> bool {
        let new = features.iter().filter(|f| !self.seen.contains(f)).count();
        if new == 0 {
            return false;
        }
        self.seen.extend(features.iter().copied());
        self.entries.push(Entry {
            document: document(),
            origin,
            new_features: new,
            features: features.to_vec(),
            fruitful_children: 0,
        });
        true
    }

    /// Reads `dir`'s scenario files (`*.json`, in name order), injects `options`' bug into
    /// each and runs them to learn their coverage. A missing folder is an empty corpus; a file
    /// that is not a valid scenario is an error naming it.
    pub fn load(dir: &Path, options: &CampaignOptions) -> Result<Corpus, String> {
        let mut names: Vec<String> = match std::fs::read_dir(dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Corpus::default()),
            Err(e) => return Err(format!("{}: {e}", dir.display())),
            Ok(listing) => listing
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect(),
        };
        names.sort();
        let mut documents = Vec::new();
        for name in &names {
            let path = dir.join(name);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut document: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
            with_bug(&mut document, options);
            crate::scenario::parse(&document.to_string(), &path.display().to_string())
                .map_err(|e| e.to_string())?;
            documents.push((name.clone(), document));
        }
        let runs = parallel_map(
            &documents,
            options.threads,
            || true,
            |(_, document)| run_input(0, false, || document.clone()),
        );
        let mut corpus = Corpus::default();
        for ((name, document), run) in documents.into_iter().zip(runs.into_iter().flatten()) {
            let (result, states) = run;
            let features = features(result.probes, &states);
            corpus.seen.extend(features.iter().copied());
            corpus.count(&features);
            corpus.entries.push(Entry {
                document,
                origin: Origin::File(name),
                new_features: 0,
                features,
                fruitful_children: 0,
            });
        }
        corpus.loaded = corpus.entries.len();
        Ok(corpus)
    }

    /// Writes the entries this campaign added to `dir`, numbered on from the files there,
    /// each without its `bug`; returns how many.
    pub fn save(&self, dir: &Path) -> io::Result<usize> {
        std::fs::create_dir_all(dir)?;
        let added = &self.entries[self.loaded..];
        for (k, entry) in added.iter().enumerate() {
            let mut document = entry.document.clone();
            document["bug"] = Value::Null;
            let path = dir.join(format!("{:06}.json", self.loaded + k));
            crate::report::write_atomically(&path, |w| {
                serde_json::to_writer_pretty(&mut *w, &document)?;
                writeln!(w)
            })?;
        }
        Ok(added.len())
    }
}

fn with_bug(document: &mut Value, options: &CampaignOptions) {
    document["bug"] = json!(options.generate.bug.map(|b| b.name()));
}

/// One input of a guided campaign and its result (whose `seed` is the input's number).
#[derive(Clone, Debug)]
pub struct GuidedRun {
    pub origin: Origin,
    pub result: SeedResult,
    /// It joined the corpus.
    pub admitted: bool,
    /// The scenario, kept for a failing run and for one that ended on a budget (to be
    /// shrunk and written as a reproducer).
    pub document: Option<Value>,
}

impl GuidedRun {
    /// The `results.jsonl` line: the seed line with the input's origin.
    pub fn to_json(&self) -> Value {
        let mut line = self.result.to_json();
        line["origin"] = self.origin.to_json();
        line["admitted"] = json!(self.admitted);
        line
    }

    pub fn failed(&self) -> bool {
        matches!(self.result.outcome, Outcome::Violation | Outcome::Panic)
    }
}

/// A finished guided campaign.
pub struct GuidedCampaign {
    /// In input order.
    pub runs: Vec<GuidedRun>,
    /// Inputs of the range not run: the time limit passed, or a failure ended the campaign.
    pub skipped: u64,
    pub wall: Duration,
}

/// What a worker runs.
enum Planned {
    Fresh(u64),
    Mutated {
        parent: usize,
        mutations: Vec<Mutation>,
        document: Value,
    },
}

/// Runs `options.seeds.end - options.seeds.start` inputs (numbered from `seeds.start`; fresh
/// seeds are drawn from `seeds.start` upward), growing `corpus`. With `until_failure`, stops
/// after the first generation with a violation or a panic. `on_result` sees results as they
/// come, for a progress display.
pub fn run_guided(
    options: &CampaignOptions,
    corpus: &mut Corpus,
    until_failure: bool,
    on_result: impl Fn(&SeedResult) + Sync,
) -> GuidedCampaign {
    let started = WallClock::now();
    let total = options.seeds.end - options.seeds.start;
    let mut fresh = options.seeds.start;
    // What pays is learnt anew by each campaign, so that one resumed from the saved corpus
    // runs what one continuing in memory would.
    let mut yields = Yields::default();
    for entry in &mut corpus.entries {
        entry.fruitful_children = 0;
    }
    let mut runs: Vec<GuidedRun> = Vec::new();
    while (runs.len() as u64) < total {
        let in_time = options
            .time_limit
            .is_none_or(|limit| started.elapsed() < limit);
        if !in_time || (until_failure && runs.iter().any(GuidedRun::failed)) {
            break;
        }
        let first = options.seeds.start + runs.len() as u64;
        let n = GENERATION.min((total - runs.len() as u64) as usize);
        let weights = corpus.weights();
        let fresh_now = yields.fresh_per_generation();
        let plan: Vec<(u64, Planned)> = (0..n)
            .map(|k| {
                let input = first + k as u64;
                let planned = if corpus.entries.is_empty() || k < fresh_now {
                    fresh += 1;
                    Planned::Fresh(fresh - 1)
                } else {
                    mutant(input, corpus, &weights, options)
                };
                (input, planned)
            })
            .collect();
        let results = parallel_map(
            &plan,
            options.threads,
            || true,
            |(input, planned)| {
                let recheck = rechecked(*input, options.recheck);
                let run = match planned {
                    Planned::Fresh(seed) => {
                        run_input(*input, recheck, || generate(*seed, &options.generate))
                    }
                    Planned::Mutated { document, .. } => {
                        run_input(*input, recheck, || document.clone())
                    }
                };
                on_result(&run.0);
                run
            },
        );
        for ((_, planned), run) in plan.into_iter().zip(results.into_iter().flatten()) {
            let (result, states) = run;
            let features = features(result.probes, &states);
            corpus.count(&features);
            let (origin, document) = match planned {
                Planned::Fresh(seed) => (Origin::Seed(seed), None),
                Planned::Mutated {
                    parent,
                    mutations,
                    document,
                } => (Origin::Mutated { parent, mutations }, Some(document)),
            };
            let failed = matches!(result.outcome, Outcome::Violation | Outcome::Panic);
            let document =
                || document.unwrap_or_else(|| generate(seed_of(&origin), &options.generate));
            // A failing input joins nothing: its coverage is the bug's, and a panicking one has
            // none.
            let (admitted, document) = if failed {
                (false, Some(document()))
            } else if result.outcome == Outcome::Budget {
                // Kept for its reproducer as well as offered to the corpus: a run that ends on
                // a budget is rare, and its coverage up to the stop is real.
                let document = document();
                let admitted = corpus.admit(|| document.clone(), origin.clone(), &features);
                (admitted, Some(document))
            } else {
                (corpus.admit(document, origin.clone(), &features), None)
            };
            yields.count(&origin, admitted);
            if let (true, Origin::Mutated { parent, .. }) = (admitted, &origin) {
                corpus.entries[*parent].fruitful_children += 1;
            }
            runs.push(GuidedRun {
                origin,
                result,
                admitted,
                document,
            });
        }
    }
    GuidedCampaign {
        skipped: total - runs.len() as u64,
        runs,
        wall: started.elapsed(),
    }
}

/// The most a fruitful entry's weight is multiplied by (`1 +` its fruitful children).
const MAX_ENERGY: u64 = 7;

/// The fewest and the most fresh generated seeds in a generation once the corpus has entries
/// (the rest are mutations): at least a quarter, so the campaign keeps finding shapes no
/// corpus entry is near, and at least a quarter of mutants, so a corpus keeps being used.
pub const MIN_FRESH: usize = 8;
pub const MAX_FRESH: usize = 24;

/// What fresh seeds and mutants each paid so far: runs, and runs that joined the corpus.
#[derive(Clone, Copy, Debug, Default)]
struct Yields {
    fresh: (u64, u64),
    mutants: (u64, u64),
}

impl Yields {
    fn count(&mut self, origin: &Origin, admitted: bool) {
        let kind = match origin {
            Origin::Seed(_) => &mut self.fresh,
            Origin::Mutated { .. } => &mut self.mutants,
            Origin::File(_) => return,
        };
        kind.0 += 1;
        kind.1 += u64::from(admitted);
    }

    /// Fresh seeds in the next generation: its share of [`GENERATION`] is the fresh seeds'
    /// share of the two yields (each `(admitted + 1) / (runs + 2)`, so that a kind not yet
    /// tried counts as paying half the time), within [`MIN_FRESH`]..=[`MAX_FRESH`]. Integer
    /// arithmetic: the same on every machine.
    fn fresh_per_generation(&self) -> usize {
        let rate = |(runs, admitted): (u64, u64)| (admitted + 1, runs + 2);
        let (fa, fr) = rate(self.fresh);
        let (ma, mr) = rate(self.mutants);
        // fresh / (fresh + mutants) with fresh = fa/fr, mutants = ma/mr.
        let fresh = u128::from(fa) * u128::from(mr);
        let mutants = u128::from(ma) * u128::from(fr);
        let share = (GENERATION as u128 * fresh + (fresh + mutants) / 2) / (fresh + mutants);
        (share as usize).clamp(MIN_FRESH, MAX_FRESH)
    }
}

fn seed_of(origin: &Origin) -> u64 {
    match origin {
        Origin::Seed(seed) => *seed,
        Origin::Mutated { .. } | Origin::File(_) => {
            unreachable!("only fresh inputs are generated again")
        }
    }
}

/// A small deterministic stream of draws (SplitMix64 over the input's number).
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        crate::record::mix64(self.0)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Input `input`'s mutant: a parent drawn by `weights` (rare situations first) and one to
/// three mutations, retried until the scenario is valid.
fn mutant(input: u64, corpus: &Corpus, weights: &[u64], options: &CampaignOptions) -> Planned {
    let mut draws = Draws(super::fnv1a(&input.to_le_bytes()));
    let total: u64 = weights.iter().sum();
    let mut pick = draws.next() % total.max(1);
    let parent = weights
        .iter()
        .position(|&w| {
            let here = pick < w;
            pick = pick.saturating_sub(w);
            here
        })
        .unwrap_or(0);
    let original = &corpus.entries[parent].document;
    for _ in 0..MUTATION_ATTEMPTS {
        let mut document = original.clone();
        let count = 1 + draws.below(3);
        let mut mutations = Vec::new();
        for _ in 0..count {
            let m = Mutation::ALL[draws.below(Mutation::ALL.len())];
            if mutate(&mut document, m, &mut draws) {
                mutations.push(m);
            }
        }
        with_bug(&mut document, options);
        let valid = crate::scenario::parse(&document.to_string(), "guided").is_ok();
        if !mutations.is_empty() && valid {
            return Planned::Mutated {
                parent,
                mutations,
                document,
            };
        }
    }
    let mut document = original.clone();
    mutate(&mut document, Mutation::TieBreakSeed, &mut draws);
    Planned::Mutated {
        parent,
        mutations: vec![Mutation::TieBreakSeed],
        document,
    }
}

/// Nanoseconds of a duration string (`"250us"`), or `None`.
fn nanos(text: &Value) -> Option<u64> {
    sim::Duration::parse(text.as_str()?)
        .ok()
        .map(|d| d.as_nanos())
}

fn duration(ns: u64) -> Value {
    json!(format!("{ns}ns"))
}

/// Every `vertex[i]` of the job (a vertex of `"auto"` parallelism counts as one subtask).
fn subtasks(document: &Value) -> Vec<String> {
    let empty = Vec::new();
    let vertices = document["job"]["vertices"].as_array().unwrap_or(&empty);
    vertices
        .iter()
        .flat_map(|v| {
            let id = v["id"].as_str().unwrap_or_default().to_owned();
            let p = v["parallelism"].as_u64().unwrap_or(1);
            (0..p).map(move |i| format!("{id}[{i}]"))
        })
        .collect()
}

/// The fault window: `heal_at`, or 20 ms when the scenario has none.
fn window_ns(document: &Value) -> u64 {
    nanos(&document["heal_at"]).unwrap_or(20_000_000).max(1)
}

/// Applies `mutation` to `document`; false when it changed nothing (the document has nothing
/// that mutation changes, or the draw gave the same value back).
fn mutate(document: &mut Value, mutation: Mutation, draws: &mut Draws) -> bool {
    let before = document.clone();
    apply(document, mutation, draws) && *document != before
}

fn apply(document: &mut Value, mutation: Mutation, draws: &mut Draws) -> bool {
    let window = window_ns(document);
    let subtasks = subtasks(document);
    let faults_len = document["faults"].as_array().map_or(0, Vec::len);
    match mutation {
        Mutation::FaultTime => {
            let timed: Vec<usize> = (0..faults_len)
                .filter(|&i| nanos(&document["faults"][i]["at"]).is_some())
                .collect();
            if timed.is_empty() {
                return false;
            }
            let fault = &mut document["faults"][timed[draws.below(timed.len())]];
            let at = nanos(&fault["at"]).unwrap_or(0);
            let new_at = if draws.next() % 2 == 0 {
                at / 1000 * (500 + draws.next() % 1001)
            } else {
                draws.next() % window
            };
            if let Some(release) = nanos(&fault["release_at"]) {
                fault["release_at"] = duration(new_at + release.saturating_sub(at));
            }
            fault["at"] = duration(new_at);
            true
        }
        Mutation::FaultTarget => {
            if faults_len == 0 {
                return false;
            }
            let fault = &mut document["faults"][draws.below(faults_len)];
            let pick = |draws: &mut Draws| json!(subtasks[draws.below(subtasks.len())]);
            if fault.get("task").is_some() && draws.next() % 2 == 0 && !subtasks.is_empty() {
                fault["task"] = pick(draws);
                return true;
            }
            let Some(when) = fault.get_mut("when").and_then(Value::as_object_mut) else {
                return false;
            };
            let Some((key, value)) = when.iter_mut().next() else {
                return false;
            };
            match (key.as_str(), value.as_u64()) {
                (_, Some(id)) => {
                    *value = json!(match draws.next() % 3 {
                        0 => id.saturating_sub(1).max(1),
                        1 => id + 1,
                        _ => 1 + draws.next() % 5,
                    })
                }
                ("finished" | "end_of_input", None) if !subtasks.is_empty() => *value = pick(draws),
                _ => return false,
            }
            true
        }
        Mutation::Latency => {
            let mut ranges: Vec<Vec<&str>> = vec![
                vec!["network", "channel_latency"],
                vec!["network", "rpc_latency"],
                vec!["checkpointing", "async_duration"],
            ];
            let vertices = document["job"]["vertices"].as_array().map_or(0, Vec::len);
            let owned: Vec<(usize, &str)> = (0..vertices)
                .flat_map(|i| [(i, "record_interval"), (i, "process_time")])
                .collect();
            ranges.retain(|path| document[path[0]][path[1]].is_string());
            let owned: Vec<(usize, &str)> = owned
                .into_iter()
                .filter(|(i, key)| document["job"]["vertices"][*i][*key].is_string())
                .collect();
            let choices = ranges.len() + owned.len();
            if choices == 0 {
                return false;
            }
            let choice = draws.below(choices);
            let field = if choice < ranges.len() {
                let path = &ranges[choice];
                &mut document[path[0]][path[1]]
            } else {
                let (i, key) = owned[choice - ranges.len()];
                &mut document["job"]["vertices"][i][key]
            };
            let (num, den) = [(1, 4), (1, 2), (2, 1), (4, 1)][draws.below(4)];
            let text = field.as_str().unwrap_or_default().to_owned();
            let scaled: Vec<String> = text
                .split("..")
                .map(|part| {
                    sim::Duration::parse(part)
                        .map(|d| format!("{}ns", (d.as_nanos() * num / den).min(MAX_LATENCY_NS)))
                        .unwrap_or_else(|_| part.to_owned())
                })
                .collect();
            *field = json!(scaled.join(".."));
            true
        }
        Mutation::Records => {
            let counts: Vec<(usize, Option<usize>)> = document["job"]["vertices"]
                .as_array()
                .map(|vs| {
                    vs.iter()
                        .enumerate()
                        .flat_map(|(i, v)| match &v["records"] {
                            Value::Array(items) => (0..items.len()).map(|k| (i, Some(k))).collect(),
                            Value::Number(_) => vec![(i, None)],
                            _ => Vec::new(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if counts.is_empty() {
                return false;
            }
            let (i, k) = counts[draws.below(counts.len())];
            let field = match k {
                Some(k) => &mut document["job"]["vertices"][i]["records"][k],
                None => &mut document["job"]["vertices"][i]["records"],
            };
            let n = field.as_u64().unwrap_or(0);
            *field = json!(match draws.next() % 6 {
                0 => 0,
                1 => n.saturating_sub(1),
                2 => n + 1,
                3 => n / 2,
                4 => n * 2,
                _ => draws.next() % 301,
            }
            .min(MAX_RECORDS));
            true
        }
        Mutation::TieBreakSeed => {
            document["seed"] = json!(draws.next() >> 32);
            if draws.next() % 2 == 0 {
                document["tie_break"] = json!("shuffled");
            }
            true
        }
        Mutation::Checkpointing => {
            let checkpointing = &mut document["checkpointing"];
            let triggers = checkpointing["trigger_at"].as_array().map_or(0, Vec::len);
            if let (Some(interval), true) =
                (nanos(&checkpointing["interval"]), draws.next() % 2 == 0)
            {
                let (num, den) = [(1, 2), (2, 1), (3, 4), (3, 2)][draws.below(4)];
                checkpointing["interval"] =
                    duration((interval * num / den).clamp(MIN_INTERVAL_NS, MAX_LATENCY_NS * 4));
                true
            } else if triggers > 0 {
                checkpointing["trigger_at"][draws.below(triggers)] =
                    duration(draws.next() % window);
                true
            } else {
                false
            }
        }
        Mutation::AddFault => {
            if subtasks.is_empty() || faults_len >= MAX_FAULTS {
                return false;
            }
            let at = duration(draws.next() % window);
            let restart = duration(1_000_000 * (1 + draws.next() % 20));
            let fault = match draws.next() % 3 {
                0 => json!({"fault": "fail_task", "task": subtasks[draws.below(subtasks.len())],
                    "at": at}),
                1 => json!({"fault": "crash_jobmaster", "restart_after": restart, "at": at}),
                _ => json!({"fault": "lose_task_manager", "task_manager": 0,
                    "restart_after": restart, "at": at}),
            };
            match document["faults"].as_array_mut() {
                Some(faults) => faults.push(fault),
                None => document["faults"] = json!([fault]),
            }
            true
        }
        Mutation::RemoveFault => {
            if faults_len == 0 {
                return false;
            }
            let k = draws.below(faults_len);
            document["faults"]
                .as_array_mut()
                .map(|f| f.remove(k))
                .is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::generate::GenerateOptions;

    fn options(threads: usize, seeds: std::ops::Range<u64>) -> CampaignOptions {
        CampaignOptions {
            seeds,
            threads,
            generate: GenerateOptions::default(),
            shard: None,
            time_limit: None,
            recheck: 0.0,
            strategy: crate::fuzz::strategy::Strategy::Guided,
        }
    }

    /// Every mutation of every input of a small corpus keeps a valid scenario most of the
    /// time, and changes the document when it applies.
    #[test]
    fn mutations_change_documents_and_mostly_stay_valid() {
        let options = options(1, 0..1);
        let mut valid = 0;
        let mut applied = 0;
        for seed in 0..40 {
            let original = generate(seed, &options.generate);
            for (k, &m) in Mutation::ALL.iter().enumerate() {
                let mut document = original.clone();
                let mut draws = Draws(seed * 31 + k as u64);
                if !mutate(&mut document, m, &mut draws) {
                    continue;
                }
                applied += 1;
                assert_ne!(
                    document,
                    original,
                    "{} changed nothing in seed {seed}",
                    m.name()
                );
                if crate::scenario::parse(&document.to_string(), "t").is_ok() {
                    valid += 1;
                }
            }
        }
        assert!(applied > 150, "{applied}");
        assert!(valid * 10 > applied * 8, "{valid} of {applied} valid");
    }

    /// The fresh seeds of a generation follow what paid: half with no evidence, more when
    /// fresh seeds joined the corpus more often than mutants, fewer otherwise, within bounds.
    #[test]
    fn fresh_seeds_per_generation_follow_their_yield() {
        let yields = |fresh, mutants| Yields { fresh, mutants };
        assert_eq!(
            yields((0, 0), (0, 0)).fresh_per_generation(),
            GENERATION / 2
        );
        assert_eq!(yields((32, 8), (96, 24)).fresh_per_generation(), 16);
        assert_eq!(yields((32, 30), (96, 1)).fresh_per_generation(), MAX_FRESH);
        assert_eq!(yields((32, 0), (96, 60)).fresh_per_generation(), MIN_FRESH);
        // Fresh seeds pay 1 in 4 (9/34), mutants 1 in 12 (9/98): 32 * 0.74 rounds to 24.
        assert_eq!(yields((32, 8), (96, 8)).fresh_per_generation(), 24);
        // Fresh seeds pay 1 in 8 (5/34), mutants 1 in 6 (17/98): 32 * 0.46 = 14.7.
        assert_eq!(yields((32, 4), (96, 16)).fresh_per_generation(), 15);
    }

    /// What a campaign's outcome is made of: each input's origin and result, and the corpus.
    fn fingerprint(campaign: &GuidedCampaign, corpus: &Corpus) -> (Vec<String>, Vec<Value>) {
        let runs = campaign
            .runs
            .iter()
            .map(|r| r.to_json().to_string())
            .collect();
        let entries = corpus.entries.iter().map(|e| e.document.clone()).collect();
        (runs, entries)
    }

    /// A guided campaign is a pure function of its parameters: the same inputs, results and
    /// corpus on one thread and on two, where generations are merged in input order whatever
    /// order their runs finished in.
    #[test]
    fn a_guided_campaign_is_the_same_on_one_and_two_threads() {
        let mut one = Corpus::default();
        let a = run_guided(&options(1, 0..96), &mut one, false, |_| {});
        let mut two = Corpus::default();
        let b = run_guided(&options(2, 0..96), &mut two, false, |_| {});
        assert_eq!(fingerprint(&a, &one), fingerprint(&b, &two));
        // Past the first generation, most inputs are mutants, and some joined the corpus.
        let mutated = a
            .runs
            .iter()
            .filter(|r| matches!(r.origin, Origin::Mutated { .. }));
        let mutated = mutated.count();
        assert!(
            (96 - GENERATION - 2 * MAX_FRESH..=96 - GENERATION - 2 * MIN_FRESH).contains(&mutated),
            "{mutated}"
        );
        assert!(one.entries.len() > 10, "{}", one.entries.len());
        assert!(a
            .runs
            .iter()
            .any(|r| r.admitted && matches!(r.origin, Origin::Mutated { .. })));
    }

    /// The corpus a campaign saves is the corpus the next one starts from: loading it gives
    /// the same entries and features, and a campaign resumed from the files runs exactly what
    /// one continuing from the corpus in memory runs. A file of one's own is an input too.
    #[test]
    fn the_corpus_persists_and_a_later_campaign_resumes_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = Corpus::default();
        run_guided(&options(2, 0..64), &mut first, false, |_| {});
        assert_eq!(first.save(dir.path()).unwrap(), first.entries.len());
        let mut loaded = Corpus::load(dir.path(), &options(2, 0..1)).unwrap();
        assert_eq!(loaded.loaded, first.entries.len());
        assert_eq!(loaded.features(), first.features());
        let documents = |c: &Corpus| {
            c.entries
                .iter()
                .map(|e| e.document.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(documents(&loaded), documents(&first));

        let mut in_memory = first.clone();
        in_memory.loaded = in_memory.entries.len();
        in_memory.hits = loaded.hits.clone();
        let resumed = run_guided(&options(2, 1000..1064), &mut loaded, false, |_| {});
        let continued = run_guided(&options(2, 1000..1064), &mut in_memory, false, |_| {});
        assert_eq!(
            fingerprint(&resumed, &loaded),
            fingerprint(&continued, &in_memory)
        );
        assert_eq!(
            resumed.runs[0].origin,
            Origin::Seed(1000),
            "fresh seeds come from the range"
        );
        // Saving again adds only the new entries, numbered on.
        let added = loaded.entries.len() - loaded.loaded;
        assert_eq!(loaded.save(dir.path()).unwrap(), added);
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, loaded.entries.len());

        // A scenario file dropped into the folder joins the corpus under its name.
        std::fs::copy(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/scenarios/cascade-option1.json"
            ),
            dir.path().join("zz-cascade.json"),
        )
        .unwrap();
        let with_file = Corpus::load(dir.path(), &options(1, 0..1)).unwrap();
        assert_eq!(
            with_file.entries.last().map(|e| e.origin.clone()),
            Some(Origin::File("zz-cascade.json".into()))
        );
        std::fs::write(dir.path().join("zz-bad.json"), "{\"name\": 1}").unwrap();
        let error = Corpus::load(dir.path(), &options(1, 0..1)).unwrap_err();
        assert!(error.contains("zz-bad.json"), "{error}");
    }
}
