//! The campaign subcommands (`fuzz`, `replay`, `check-determinism`, `mutants`): argument
//! parsing and printing around `flinksim::fuzz`, kept apart from `main.rs` so the single-run
//! commands stay small.

use clap::{Args, ValueEnum};
use flinksim::bug::Bug;
use flinksim::fuzz::campaign::{run_campaign, seeds, CampaignOptions, CampaignResult, SeedResult};
use flinksim::fuzz::coverage::{coverage, write_coverage};
use flinksim::fuzz::exhaustive::{explore, Bounds};
use flinksim::fuzz::generate::GenerateOptions;
use flinksim::fuzz::guided::{run_guided, Corpus, GuidedRun, Origin};
use flinksim::fuzz::header::CampaignHeader;
use flinksim::fuzz::hunt::{hunt, versus_random, Cell, Target as HuntTarget};
use flinksim::fuzz::replay::{replay, Replay};
use flinksim::fuzz::shrink::{
    shrink_document, shrink_seed, with_pct_schedule, write_found, write_reproducer, Runner, Shrunk,
    Size, Target, MAX_SHRINK_RUNS,
};
use flinksim::fuzz::strategy::{Strategy, DEFAULT_PCT_DEPTH};
use flinksim::fuzz::{mutants, parallel_map, Outcome};
use flinksim::oracle::invariant::Invariant;
use flinksim::report::stop_id;
use flinksim::scenario::FinishProtocol;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim::explore::pct_bound;
use sim::StopReason;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Args)]
pub struct FuzzArgs {
    /// The seeds to run, `A..B` (B excluded).
    #[arg(long, default_value = "0..1000", value_parser = parse_seeds)]
    seeds: Range<u64>,
    /// Worker threads; each run is single-threaded. Results do not depend on it.
    #[arg(long, default_value_t = default_threads())]
    threads: usize,
    /// Execution mode of the generated jobs: `any` makes one seed in five a batch job (P2).
    #[arg(long, value_enum, default_value_t = ModeArg::Any)]
    mode: ModeArg,
    /// The checkpoint finish protocol of the generated jobs.
    #[arg(long, value_enum, default_value_t = ProtocolArg::Any)]
    protocol: ProtocolArg,
    /// Inject this bug into every run (see `flinksim bugs`).
    #[arg(long, value_name = "NAME", value_parser = crate::parse_bug)]
    bug: Option<Bug>,
    /// Where to write `results.jsonl` and the shrunk scenarios with their traces.
    #[arg(long, value_name = "DIR", default_value = "fuzz-out")]
    out: PathBuf,
    /// Start no new seed after this much wall time, like `90s`, `10m` or `1h`.
    #[arg(long, value_name = "D", value_parser = parse_wall_duration)]
    time_limit: Option<Duration>,
    /// Run only the seeds ≡ K (mod N); `flinksim merge` joins the shards into the whole.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    /// Run this fraction of the seeds twice and compare trace hashes (`determinism`).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, value_parser = parse_fraction)]
    recheck: f64,
    /// Shrink at most this many violating seeds (the lowest ones), and as many panic locations
    /// and budgets runs ended on (the lowest seed of each); under `pct` each candidate runs
    /// under the seed's PCT scheduler, under `guided` a mutant shrinks by document edits.
    #[arg(long, value_name = "N", default_value_t = 10)]
    shrink: usize,
    /// How to explore: `random` seeds, `pct` (a priority scheduler on each seed's scenario
    /// that also postpones RPC arrivals), `exhaustive` (every class of orders of one --scenario) or
    /// `guided` (a corpus of inputs that reached new coverage, kept in DIR/corpus, mutated) or
    /// `swarm` (each seed switches the generator's optional features on or off first).
    #[arg(long, value_enum, default_value_t = StrategyArg::Random)]
    strategy: StrategyArg,
    /// `pct`: the bug depth targeted (depth − 1 priority change points per run).
    #[arg(long, value_name = "D", default_value_t = DEFAULT_PCT_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    depth: u32,
    /// `exhaustive`: the scenario file to explore.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// `exhaustive`: the most runs per latency variant.
    #[arg(long, value_name = "N", default_value_t = Bounds::default().max_runs)]
    max_runs: u64,
    /// `exhaustive`: branch at the first N branch points of a run (instants where two or
    /// more events are due); past them take the first event.
    #[arg(long, value_name = "N", default_value_t = Bounds::default().max_depth)]
    max_depth: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StrategyArg {
    Random,
    Pct,
    Exhaustive,
    Guided,
    Swarm,
}

#[derive(Args)]
pub struct HuntArgs {
    /// The most runs per trial.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    budget: u64,
    /// Trials per strategy and target; each cell is their median.
    #[arg(long, value_name = "T", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    trials: u64,
    /// Worker threads. Runs to a failure do not depend on it; wall times do.
    #[arg(long, default_value_t = default_threads())]
    threads: usize,
    /// Hunt only these targets (injected bugs or source mutants), by name.
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Print the table as Markdown (the README's).
    #[arg(long)]
    markdown: bool,
}

#[derive(Args)]
pub struct ReplayArgs {
    /// A trace written by `flinksim run --trace` or by a campaign.
    trace: PathBuf,
}

#[derive(Args)]
pub struct CheckDeterminismArgs {
    /// The scenario file (JSON).
    scenario: PathBuf,
    /// How many separate processes run it.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..))]
    runs: u32,
    /// Use this seed instead of the scenario's.
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Args)]
pub struct MutantsArgs {
    /// The largest campaign per bug; a bug not detected within it fails the command.
    #[arg(long, value_name = "N", default_value_t = 200)]
    seeds_per_bug: u64,
    /// Worker threads. Results do not depend on it.
    #[arg(long, default_value_t = default_threads())]
    threads: usize,
    /// Also write each bug's shrunk scenario and trace here.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Streaming,
    Batch,
    Any,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProtocolArg {
    Option1,
    Option2,
    Flink,
    Legacy,
    Any,
}

impl ProtocolArg {
    fn protocol(self) -> Option<FinishProtocol> {
        match self {
            ProtocolArg::Option1 => Some(FinishProtocol::Option1),
            ProtocolArg::Option2 => Some(FinishProtocol::Option2),
            ProtocolArg::Flink => Some(FinishProtocol::Flink),
            ProtocolArg::Legacy => Some(FinishProtocol::Legacy),
            ProtocolArg::Any => None,
        }
    }
}

pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(crate) fn parse_seeds(text: &str) -> Result<Range<u64>, String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a seed range; write it like 0..1000"))?;
    let bound = |s: &str| {
        s.parse::<u64>()
            .map_err(|e| format!("{text:?}: {s:?} is not a seed: {e}"))
    };
    let (a, b) = (bound(a)?, bound(b)?);
    if a >= b {
        return Err(format!(
            "{text:?} is empty; the end is excluded, as in 0..1000"
        ));
    }
    Ok(a..b)
}

fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if n > 0 && k < n => Ok((k, n)),
        _ => Err(format!(
            "{text:?} is not a shard; write K/N with 0 <= K < N, like 0/4"
        )),
    }
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("{text:?} is not a fraction from 0 to 1, like 0.05")),
    }
}

/// Wall-clock durations: a number and `ms`, `s`, `m` or `h`.
fn parse_wall_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let seconds = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("{text:?}: write a duration like 90s, 10m or 1h")),
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n > 0.0)
        .map(|n| Duration::from_secs_f64(n * seconds))
        .ok_or_else(|| format!("{text:?}: write a duration like 90s, 10m or 1h"))
}

/// Writes a campaign's `results.jsonl` at `path` (atomically: a complete file or none): the
/// campaign header, then one line per seed or input.
fn write_results(
    path: &Path,
    header: &CampaignHeader,
    lines: impl Iterator<Item = serde_json::Value>,
) -> io::Result<()> {
    flinksim::report::write_atomically(path, |w| {
        serde_json::to_writer(&mut *w, &header.to_json())?;
        writeln!(w)?;
        for line in lines {
            serde_json::to_writer(&mut *w, &line)?;
            writeln!(w)?;
        }
        Ok(())
    })
    .map_err(|e| with_path(path, e))
}

pub fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn usage(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

pub fn cmd_fuzz(args: FuzzArgs) -> io::Result<ExitCode> {
    let strategy = match args.strategy {
        StrategyArg::Random => Strategy::Random,
        StrategyArg::Pct => Strategy::Pct { depth: args.depth },
        StrategyArg::Exhaustive => Strategy::Exhaustive,
        StrategyArg::Guided => Strategy::Guided,
        StrategyArg::Swarm => Strategy::Swarm,
    };
    match (strategy, &args.scenario) {
        (Strategy::Exhaustive, Some(path)) => return cmd_exhaustive(&args, path),
        (Strategy::Exhaustive, None) => {
            return Err(usage(
                "--strategy exhaustive explores one scenario: give it with --scenario FILE".into(),
            ))
        }
        (Strategy::Random | Strategy::Pct { .. } | Strategy::Guided | Strategy::Swarm, Some(_)) => {
            return Err(usage(format!(
                "--scenario is for --strategy exhaustive; {} draws a scenario per seed",
                strategy.name()
            )))
        }
        (Strategy::Random | Strategy::Pct { .. } | Strategy::Guided | Strategy::Swarm, None) => {}
    }
    let options = CampaignOptions {
        seeds: args.seeds.clone(),
        threads: args.threads.max(1),
        generate: GenerateOptions {
            mode: match args.mode {
                ModeArg::Streaming => Some(flinksim::scenario::Mode::Streaming),
                ModeArg::Batch => Some(flinksim::scenario::Mode::Batch),
                ModeArg::Any => None,
            },
            protocol: args.protocol.protocol(),
            bug: args.bug,
            unbiased: false,
            swarm: strategy == Strategy::Swarm,
        },
        shard: args.shard,
        time_limit: args.time_limit,
        recheck: args.recheck,
        strategy,
    };
    if strategy == Strategy::Guided {
        return cmd_fuzz_guided(&args, &options);
    }
    let total = seeds(&options).len() as u64;
    let header = CampaignHeader::new(&options, args.shrink);
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "flinksim {} fuzz: seeds {}..{}{}, {total} seeds, {} threads, {}",
        header.version,
        args.seeds.start,
        args.seeds.end,
        args.shard
            .map_or(String::new(), |(k, n)| format!(" (shard {k}/{n})")),
        options.threads,
        header.describe(),
    )?;
    out.flush()?;
    std::fs::create_dir_all(&args.out).map_err(|e| with_path(&args.out, e))?;

    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} seeds  {per_sec}  {msg}  (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let failures = AtomicU64::new(0);
    let panics = AtomicU64::new(0);
    let campaign = run_campaign(&options, |result| {
        let counter = match result.outcome {
            Outcome::Violation => Some(&failures),
            Outcome::Panic => Some(&panics),
            Outcome::Ok | Outcome::Budget => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
            bar.set_message(format!(
                "{} failing, {} panicked",
                failures.load(Ordering::Relaxed),
                panics.load(Ordering::Relaxed)
            ));
        }
        bar.inc(1);
    });
    bar.finish_and_clear();

    let results_path = args.out.join("results.jsonl");
    write_results(
        &results_path,
        &header,
        campaign.results.iter().map(SeedResult::to_json),
    )?;
    print_table(&mut out, &campaign.results, Some(&header.reproduce_flags()))?;
    write_coverage(&mut out, &coverage(&campaign.results))?;

    if let Strategy::Pct { depth } = strategy {
        print_pct_bound(&mut out, &campaign.results, depth)?;
    }
    shrink_violations(&mut out, &args, &options, &campaign)?;
    if campaign.violations().count() > args.shrink {
        writeln!(
            out,
            "({} more violating seeds not shrunk; --shrink raises the limit)",
            campaign.violations().count() - args.shrink
        )?;
    }
    writeln!(
        out,
        "throughput: {:.1} seeds/s per thread ({} seeds in {:.2}s on {} threads)",
        campaign.seeds_per_second_per_thread(options.threads),
        campaign.results.len(),
        campaign.wall.as_secs_f64(),
        options.threads
    )?;
    if campaign.skipped > 0 {
        writeln!(
            out,
            "time limit reached: {} of {total} seeds were not started",
            campaign.skipped
        )?;
    }
    writeln!(out, "results: {}", results_path.display())?;
    // Exit codes: 3 when any run panicked (a model bug, whatever else happened), 1 when some
    // run violated an invariant, 0 when the campaign is clean.
    Ok(if campaign.panics().next().is_some() {
        ExitCode::from(3)
    } else if campaign.violations().next().is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Shrinks the lowest violating seeds, one shrink per (seed, invariant), the lowest seed of
/// each panic location and the lowest seed of each budget runs ended on, across threads, and
/// writes their reproducers. Under `pct` every
/// candidate runs under the seed's PCT scheduler, and the reproducer's `tie_break` replays
/// the order (and the postponed RPCs) of the shrunk scenario's PCT run.
fn shrink_violations(
    out: &mut impl Write,
    args: &FuzzArgs,
    options: &CampaignOptions,
    campaign: &CampaignResult,
) -> io::Result<()> {
    let runner = |seed| match options.strategy {
        Strategy::Pct { depth } => Runner::Pct { seed, depth },
        Strategy::Random | Strategy::Guided | Strategy::Exhaustive | Strategy::Swarm => {
            Runner::Plain
        }
    };
    let mut targets: Vec<(u64, Target)> = campaign
        .violations()
        .take(args.shrink)
        .flat_map(|r| {
            r.violated
                .iter()
                .filter(|&&i| i != Invariant::Determinism)
                .map(move |&i| (r.seed, Target::Invariant(i)))
        })
        .collect();
    let mut panic_locations: BTreeMap<&str, u64> = BTreeMap::new();
    for (r, p) in campaign.panics() {
        panic_locations.entry(p.location.as_str()).or_insert(r.seed);
    }
    targets.extend(
        panic_locations
            .iter()
            .take(args.shrink)
            .map(|(&location, &seed)| {
                (
                    seed,
                    Target::Panic {
                        location: location.to_owned(),
                    },
                )
            }),
    );
    // The lowest seed of each budget a run ended on with no violation.
    let budgets = first_of_each_budget(campaign.budgets().map(|(r, stop)| (r.seed, stop)));
    targets.extend(
        budgets
            .into_iter()
            .take(args.shrink)
            .map(|(seed, stop)| (seed, Target::Budget { stop })),
    );
    let shrunk = parallel_map(
        &targets,
        options.threads,
        || true,
        |(seed, target)| {
            let runner = runner(*seed);
            let shrunk = shrink_seed(*seed, &options.generate, target, MAX_SHRINK_RUNS, runner)?;
            let document = with_pct_schedule(&shrunk.document, runner).ok()?;
            Some((shrunk.runs, document))
        },
    );
    for ((seed, target), shrunk) in targets.iter().zip(shrunk.into_iter().flatten()) {
        // A seed that fails only as part of a whole campaign would be a determinism bug; the
        // recheck reports those, so here the seed always fails again.
        let Some((runs, document)) = shrunk else {
            continue;
        };
        let shrunk = Shrunk { document, runs };
        let path = write_reproducer(&args.out, &shrunk.document, *seed, target)?;
        let size = Size::of(&shrunk.document);
        writeln!(
            out,
            "shrunk seed {seed} ({target}) in {} runs: {}\n    reproduce: flinksim run {}",
            shrunk.runs,
            describe_size(size),
            path.display()
        )?;
    }
    Ok(())
}

/// The first run (in the order given) of each budget runs ended on, in the budgets' id order:
/// the ones a campaign shrinks.
fn first_of_each_budget<T>(runs: impl Iterator<Item = (T, StopReason)>) -> Vec<(T, StopReason)> {
    let mut first: BTreeMap<&str, (T, StopReason)> = BTreeMap::new();
    for (run, stop) in runs {
        first.entry(stop_id(stop)).or_insert((run, stop));
    }
    first.into_values().collect()
}

/// PCT's guarantee for this campaign: each run finds a bug of depth at most `depth` with
/// probability at least `1/(n·k^(depth−1))`; stated with the largest `n` and `k` of its runs,
/// the weakest bound of any of them.
fn print_pct_bound(out: &mut impl Write, results: &[SeedResult], depth: u32) -> io::Result<()> {
    let runs = results.iter().filter_map(|r| r.pct.as_ref());
    let n = runs.clone().map(|p| p.actors).max().unwrap_or(0);
    let k = runs.map(|p| p.steps).max().unwrap_or(0);
    writeln!(
        out,
        "pct depth {depth}: n = {n} actors, k = {k} steps (the largest of any run): each run \
         finds a bug of depth <= {depth} with probability >= 1/(n*k^{}) = {:.3e}",
        depth - 1,
        pct_bound(n, k, depth)
    )?;
    let runs = results.iter().filter_map(|r| r.pct.as_ref());
    let postponed = runs.clone().map(|p| p.delays.len()).sum::<usize>();
    writeln!(
        out,
        "pct delays: the change points postponed {postponed} RPC arrivals in {} of {} runs, \
         within their latency ranges (not covered by the bound)",
        runs.clone().filter(|p| !p.delays.is_empty()).count(),
        runs.count()
    )
}

/// `fuzz --strategy exhaustive --scenario FILE`: the certificate or the first counterexample.
fn cmd_exhaustive(args: &FuzzArgs, path: &Path) -> io::Result<ExitCode> {
    let text = std::fs::read_to_string(path).map_err(|e| with_path(path, e))?;
    let label = path.display().to_string();
    if let Err(e) = flinksim::scenario::parse(&text, &label) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(2));
    }
    let mut document: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| with_path(path, io::Error::new(io::ErrorKind::InvalidData, e)))?;
    if let Some(bug) = args.bug {
        document["bug"] = bug.name().into();
    }
    let bounds = Bounds {
        max_runs: args.max_runs,
        max_depth: args.max_depth,
        time_limit: args.time_limit,
    };
    let threads = args.threads.max(1);
    let mut out = io::stdout().lock();
    let exploration =
        explore(&document, bounds, threads).map_err(|e| usage(format!("{label}: {e}")))?;
    writeln!(
        out,
        "flinksim {} fuzz --strategy exhaustive: {label}, {} latency variants, at most {} runs \
         each, branching at the first {} branch points of a run",
        flinksim::fuzz::header::VERSION,
        exploration.total_variants,
        bounds.max_runs,
        bounds.max_depth
    )?;
    for v in &exploration.variants {
        writeln!(
            out,
            "  {}: {} classes, {} redundant runs",
            v.variant.describe(),
            v.classes,
            v.redundant
        )?;
    }
    let cuts = exploration.cuts();
    if let Some((variant, found)) = exploration.counterexample() {
        let what = match (&found.panic, found.violated.first()) {
            (Some(panic), _) => format!("the model panicked: {panic}"),
            (None, _) => found
                .violated
                .iter()
                .map(|i| i.id())
                .collect::<Vec<_>>()
                .join(", "),
        };
        std::fs::create_dir_all(&args.out).map_err(|e| with_path(&args.out, e))?;
        let description = format!(
            "Found by `flinksim fuzz --strategy exhaustive --scenario {label}`: its run {} \
             with latencies {}, in the order of the tie_break choices. `flinksim run` on this \
             file replays it.",
            found.run,
            variant.describe()
        );
        let file = write_found(
            &args.out,
            "exhaustive-counterexample",
            &found.document,
            found.violated.first().copied(),
            &description,
        )?;
        writeln!(
            out,
            "counterexample after {} classes: {what} ({}, run {})\n    reproduce: flinksim run {}",
            exploration.classes(),
            variant.describe(),
            found.run,
            file.display()
        )?;
        return Ok(ExitCode::from(if found.panic.is_some() { 3 } else { 1 }));
    }
    writeln!(
        out,
        "{} classes explored, 0 violations",
        exploration.classes()
    )?;
    if cuts.is_empty() {
        writeln!(
            out,
            "certificate: every class of same-instant orders (events of different actors \
             commute) under each of the {} latency variants; no bound was reached",
            exploration.total_variants
        )?;
    } else {
        writeln!(
            out,
            "not a certificate: the search was cut by {} (--max-depth, --max-runs, \
             --time-limit); {} of {} latency variants searched",
            cuts.join(", "),
            exploration.variants.len(),
            exploration.total_variants
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn describe_size(size: Size) -> String {
    format!(
        "{} vertices, {} subtasks, {} faults",
        size.vertices, size.subtasks, size.faults
    )
}

/// The outcome counts, then one row per violated invariant: how many seeds, and the first.
/// `merge` prints the same table for the merged shards, so it takes seed results, not a run.
/// `flags` are the `fuzz` options that reproduce a seed (`CampaignHeader::reproduce_flags`);
/// `None` for a guided campaign, whose inputs are not seeds (it writes them as files instead).
pub fn print_table(
    out: &mut impl Write,
    results: &[SeedResult],
    flags: Option<&str>,
) -> io::Result<()> {
    let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
    writeln!(
        out,
        "outcomes: {} ok, {} violation, {} budget, {} panic",
        count(Outcome::Ok),
        count(Outcome::Violation),
        count(Outcome::Budget),
        count(Outcome::Panic)
    )?;
    // Budget stops by reason: a pending budget means a world that grew without bound.
    let mut budgets: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in results.iter().filter(|r| r.outcome == Outcome::Budget) {
        if let Some(stop) = r.stop {
            budgets
                .entry(flinksim::report::stop_id(stop))
                .or_insert((0, r.seed))
                .0 += 1;
        }
    }
    for (stop, (seeds, first)) in &budgets {
        writeln!(out, "budget {stop}: {seeds} seeds, first {first}")?;
    }
    // Panics by location, each with its count, first seed and message.
    let mut by_location: BTreeMap<&str, (u64, u64, &str)> = BTreeMap::new();
    for (r, p) in results
        .iter()
        .filter_map(|r| r.panic.as_ref().map(|p| (r, p)))
    {
        by_location
            .entry(p.location.as_str())
            .or_insert((0, r.seed, p.message.as_str()))
            .0 += 1;
    }
    for (location, (seeds, first, message)) in &by_location {
        writeln!(
            out,
            "panic at {location}: {seeds} seeds, first {first}: {message}"
        )?;
        if let Some(flags) = flags {
            writeln!(
                out,
                "    reproduce: flinksim fuzz --seeds {first}..{}{flags}",
                first + 1
            )?;
        }
    }
    let mut by_invariant: BTreeMap<Invariant, (u64, u64)> = BTreeMap::new();
    for r in results.iter().filter(|r| r.outcome == Outcome::Violation) {
        for &i in &r.violated {
            by_invariant.entry(i).or_insert((0, r.seed)).0 += 1;
        }
    }
    if by_invariant.is_empty() {
        return writeln!(out, "no invariant violated");
    }
    writeln!(out, "{:<22} {:>7}  first seed", "invariant", "seeds")?;
    for (invariant, (seeds, first)) in by_invariant {
        writeln!(out, "{:<22} {seeds:>7}  {first}", invariant.id())?;
    }
    Ok(())
}

pub fn cmd_replay(args: ReplayArgs) -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    match replay(&args.trace)? {
        Replay::Identical { events, trace_hash } => {
            writeln!(
                out,
                "identical: {events} events, trace hash {trace_hash:#018x}"
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Replay::Diverged {
            line,
            recorded,
            replayed,
        } => {
            let show = |v: Option<serde_json::Value>| {
                v.map_or("(the trace has ended)".to_owned(), |v| v.to_string())
            };
            writeln!(
                out,
                "diverged at line {line} of {}:\n  recorded: {}\n  replayed: {}",
                args.trace.display(),
                show(recorded),
                show(replayed)
            )?;
            Ok(ExitCode::from(1))
        }
        Replay::Panicked(panic) => {
            writeln!(
                out,
                "the replayed run {panic}: a broken invariant of the model as it is now"
            )?;
            Ok(ExitCode::from(3))
        }
    }
}

/// Runs the scenario in separate processes (`flinksim run --quiet --summary`): a separate
/// process has its own address space layout, allocator state and environment, so a hidden
/// dependence on any of them (a pointer-keyed map, `HashMap` order) shows as a different hash.
pub fn cmd_check_determinism(args: CheckDeterminismArgs) -> io::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let dir = tempfile::tempdir()?;
    let mut hashes: Vec<String> = Vec::new();
    for n in 0..args.runs {
        let summary = dir.path().join(format!("run-{n}.json"));
        let mut command = std::process::Command::new(&exe);
        command
            .arg("run")
            .arg(&args.scenario)
            .arg("--quiet")
            .arg("--summary")
            .arg(&summary);
        if let Some(seed) = args.seed {
            command.arg("--seed").arg(seed.to_string());
        }
        let output = command.output()?;
        // Exit 3: the run panicked (`flinksim run` says where on stderr): a found bug.
        if output.status.code() == Some(3) {
            writeln!(io::stdout(), "run {n} panicked:")?;
            io::stdout().write_all(&output.stderr)?;
            return Ok(ExitCode::from(3));
        }
        // Exit 1 only means the scenario's expectations failed; the hash is still there.
        if !matches!(output.status.code(), Some(0 | 1)) {
            io::stderr().write_all(&output.stderr)?;
            return Ok(ExitCode::from(2));
        }
        let text = std::fs::read_to_string(&summary).map_err(|e| with_path(&summary, e))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| with_path(&summary, io::Error::new(io::ErrorKind::InvalidData, e)))?;
        hashes.push(json["trace_hash"].as_str().unwrap_or("?").to_owned());
    }
    let mut out = io::stdout().lock();
    if hashes.iter().all(|h| *h == hashes[0]) {
        writeln!(
            out,
            "deterministic: {} processes, trace hash {}",
            args.runs, hashes[0]
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(out, "NOT deterministic: trace hashes by process:")?;
        for (n, h) in hashes.iter().enumerate() {
            writeln!(out, "  run {n}: {h}")?;
        }
        Ok(ExitCode::from(1))
    }
}

pub fn cmd_mutants(args: MutantsArgs) -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "mutation score: up to {} seeds per bug, {} threads",
        args.seeds_per_bug, args.threads
    )?;
    // The bug column is as wide as the longest name, so the table stays aligned.
    let width = Bug::ALL.iter().map(|b| b.name().len()).max().unwrap_or(0);
    writeln!(
        out,
        "{:<width$} {:<20} {:>9} {:>9}  shrunk to",
        "bug", "caught by", "biased", "plain"
    )?;
    let mut missed = 0;
    let mut plain_detected = 0;
    let mut explored = 0;
    // Bugs whose shape campaigns seldom draw: scored like any other, but a miss is left to the
    // scenario that shows them (`tests/bugs.rs`), not counted against the oracles.
    let mut seldom = 0;
    for bug in Bug::ALL {
        if bug.needs_exploration() {
            explored += 1;
            writeln!(
                out,
                "{:<width$} {:<20} {:>9} {:>9}  an ordering bug: fuzz --strategy exhaustive finds it",
                bug.name(),
                bug.caught_by().id(),
                "-",
                "-"
            )?;
            continue;
        }
        let mutant = mutants::score(bug, args.seeds_per_bug, args.threads.max(1));
        let seeds = mutant
            .detected_at
            .map_or("missed".to_owned(), |_| mutant.seeds_run.to_string());
        let plain = mutant
            .plain_detected_at
            .map_or("missed".to_owned(), |s| (s + 1).to_string());
        let size = match mutant.shrunk_size() {
            Some(size) => describe_size(size),
            None if bug.shown_by_scenario_only() => {
                "seldom drawn by campaigns: its scenario shows it (tests/bugs.rs)".to_owned()
            }
            None => "-".to_owned(),
        };
        writeln!(
            out,
            "{:<width$} {:<20} {seeds:>9} {plain:>9}  {size}",
            bug.name(),
            bug.caught_by().id()
        )?;
        if let (Some(dir), Some(seed), Some(shrunk)) =
            (&args.out, mutant.detected_at, &mutant.shrunk)
        {
            // One folder per bug: two bugs may be detected by the same seed and invariant.
            let dir = dir.join(bug.name());
            std::fs::create_dir_all(&dir).map_err(|e| with_path(&dir, e))?;
            let target = Target::Invariant(bug.caught_by());
            let path = write_reproducer(&dir, &shrunk.document, seed, &target)?;
            writeln!(out, "    reproduce: flinksim run {}", path.display())?;
        }
        if mutant.detected_at.is_none() {
            if bug.shown_by_scenario_only() {
                seldom += 1;
            } else {
                missed += 1;
            }
        }
        if mutant.plain_detected_at.is_some() {
            plain_detected += 1;
        }
    }
    writeln!(
        out,
        "detected {} of {} bugs (biased generator); {} by the plain generator{}",
        Bug::ALL.len() - explored - seldom - missed,
        Bug::ALL.len() - explored - seldom,
        plain_detected,
        match seldom {
            0 => String::new(),
            n => format!("; {n} seldom drawn, each left to its scenario"),
        }
    )?;
    Ok(if missed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `fuzz --strategy guided` (`flinksim::fuzz::guided`): the corpus in `OUT/corpus` is loaded,
/// grown and saved; each failing input (up to `--shrink` of them) and the first input of each
/// budget runs ended on are shrunk and written as reproducers.
fn cmd_fuzz_guided(args: &FuzzArgs, options: &CampaignOptions) -> io::Result<ExitCode> {
    if args.shard.is_some() {
        eprintln!(
            "error: --shard splits a random campaign's seeds; a guided campaign's inputs depend \
             on the corpus the earlier ones grew, so it runs on one machine"
        );
        return Ok(ExitCode::from(2));
    }
    let corpus_dir = args.out.join("corpus");
    let mut corpus = match Corpus::load(&corpus_dir, options) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!("error: corpus: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut header = CampaignHeader::new(options, args.shrink);
    header
        .parameters
        .insert("corpus".into(), serde_json::json!(corpus.loaded));
    let total = args.seeds.end - args.seeds.start;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "flinksim {} fuzz --strategy guided: inputs {}..{}, {} threads, {}",
        header.version,
        args.seeds.start,
        args.seeds.end,
        options.threads,
        header.describe(),
    )?;
    writeln!(
        out,
        "corpus: {} entries from {} ({} features)",
        corpus.loaded,
        corpus_dir.display(),
        corpus.features()
    )?;
    out.flush()?;
    std::fs::create_dir_all(&args.out).map_err(|e| with_path(&args.out, e))?;
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let campaign = run_guided(options, &mut corpus, false, |_| bar.inc(1));
    bar.finish_and_clear();
    let results_path = args.out.join("results.jsonl");
    write_results(
        &results_path,
        &header,
        campaign.runs.iter().map(|run| run.to_json()),
    )?;
    let results: Vec<SeedResult> = campaign.runs.iter().map(|r| r.result.clone()).collect();
    print_table(&mut out, &results, None)?;
    write_coverage(&mut out, &coverage(&results))?;
    // Each failing input (up to --shrink) is shrunk like a random campaign's seed: a fresh
    // seed through its value tree, a mutant or corpus file by the document edits alone; so is
    // the first input of each budget runs ended on.
    let mut failing: Vec<(&GuidedRun, Target)> = campaign
        .runs
        .iter()
        .filter(|r| r.failed() && r.document.is_some())
        .filter_map(|run| {
            let target = match (&run.result.panic, run.result.violated.first()) {
                (Some(p), _) => Target::Panic {
                    location: p.location.clone(),
                },
                (None, Some(&invariant)) => Target::Invariant(invariant),
                (None, None) => return None,
            };
            Some((run, target))
        })
        .take(args.shrink)
        .collect();
    // And the first input of each budget a run ended on with no violation, as a random
    // campaign does.
    let budgets = first_of_each_budget(
        campaign
            .runs
            .iter()
            .filter(|r| r.result.outcome == Outcome::Budget && r.document.is_some())
            .filter_map(|run| run.result.stop.map(|stop| (run, stop))),
    );
    failing.extend(
        budgets
            .into_iter()
            .take(args.shrink)
            .map(|(run, stop)| (run, Target::Budget { stop })),
    );
    let shrunk = parallel_map(
        &failing,
        options.threads,
        || true,
        |(run, target)| match (&run.origin, &run.document) {
            (Origin::Seed(seed), _) => shrink_seed(
                *seed,
                &options.generate,
                target,
                MAX_SHRINK_RUNS,
                Runner::Plain,
            ),
            (_, Some(document)) => {
                shrink_document(document, target, MAX_SHRINK_RUNS, Runner::Plain)
            }
            (_, None) => None,
        },
    );
    for ((run, target), shrunk) in failing.iter().zip(shrunk.into_iter().flatten()) {
        let input = run.result.seed;
        let origin = serde_json::to_string(&run.origin.to_json()).unwrap_or_default();
        let (document, how) = match &shrunk {
            Some(shrunk) => (
                &shrunk.document,
                format!(
                    "shrunk in {} runs: {}",
                    shrunk.runs,
                    describe_size(Size::of(&shrunk.document))
                ),
            ),
            // Kept as it ran if it no longer fails alone (a determinism bug: the recheck
            // says so).
            None => (
                run.document.as_ref().expect("kept"),
                "not shrunk".to_owned(),
            ),
        };
        let path = write_reproducer(&args.out, document, input, target)?;
        writeln!(
            out,
            "input {input} ({target}): {origin}, {how}\n    reproduce: flinksim run {}",
            path.display()
        )?;
    }
    let saved = corpus
        .save(&corpus_dir)
        .map_err(|e| with_path(&corpus_dir, e))?;
    writeln!(
        out,
        "corpus: {saved} new entries, {} in all ({} features), in {}",
        corpus.entries.len(),
        corpus.features(),
        corpus_dir.display()
    )?;
    writeln!(
        out,
        "throughput: {:.1} runs/s per thread ({} runs in {:.2}s on {} threads)",
        campaign.runs.len() as f64 / campaign.wall.as_secs_f64().max(1e-9) / options.threads as f64,
        campaign.runs.len(),
        campaign.wall.as_secs_f64(),
        options.threads
    )?;
    if campaign.skipped > 0 {
        writeln!(
            out,
            "time limit reached: {} of {total} inputs were not run",
            campaign.skipped
        )?;
    }
    writeln!(out, "results: {}", results_path.display())?;
    let outcome = |o: Outcome| campaign.runs.iter().any(|r| r.result.outcome == o);
    Ok(if outcome(Outcome::Panic) {
        ExitCode::from(3)
    } else if outcome(Outcome::Violation) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn wall(d: std::time::Duration) -> String {
    if d.as_secs_f64() < 1.0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// The hunt's rows with room: random needs more than this many runs, so a strategy whose
/// first generation (guided) or whose scenarios (pct, swarm's batch seeds) are random's own
/// can differ from it. Below it, ties are structural.
const ROOM: u64 = 32;

/// `flinksim hunt`: runs to the first failure, per target and strategy (`flinksim::fuzz::hunt`).
pub fn cmd_hunt(args: HuntArgs) -> io::Result<ExitCode> {
    let mut targets = HuntTarget::all();
    if !args.only.is_empty() {
        for name in &args.only {
            if !targets.iter().any(|t| t.name() == name) {
                let known: Vec<&str> = targets.iter().map(|t| t.name()).collect();
                eprintln!(
                    "error: --only {name:?}: no such target in this build; the targets are: {}{}",
                    known.join(", "),
                    if flinksim::source_mutant::ENABLED {
                        ""
                    } else {
                        " (source mutants need a build with --features source-mutants)"
                    }
                );
                return Ok(ExitCode::from(2));
            }
        }
        targets.retain(|t| args.only.iter().any(|n| n == t.name()));
    }
    let threads = args.threads.max(1);
    let mut out = io::stdout().lock();
    let strategies = Strategy::HUNTED;
    writeln!(
        out,
        "hunt: median runs to the first failure over {} trials of up to {} runs, {threads} \
         threads, the plain generator; a run fails on any unexpected violation or a panic{}",
        args.trials,
        args.budget,
        if flinksim::source_mutant::ENABLED {
            ""
        } else {
            " (no source mutants: build with --features source-mutants)"
        }
    )?;
    let width = targets.iter().map(|t| t.name().len()).max().unwrap_or(6);
    let names: Vec<&str> = strategies.iter().map(|s| s.name()).collect();
    if args.markdown {
        writeln!(
            out,
            "| target | kind | {} | fewest runs | {} |",
            names
                .iter()
                .map(|n| format!("{n} runs"))
                .collect::<Vec<_>>()
                .join(" | "),
            names
                .iter()
                .map(|n| format!("{n} wall"))
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
        writeln!(out, "|{}", " --- |".repeat(3 + 2 * strategies.len()))?;
    } else {
        write!(out, "{:<width$} {:<8}", "target", "kind")?;
        for name in &names {
            write!(out, " {name:>12}")?;
        }
        write!(out, "  {:<12}", "fewest runs")?;
        for name in &names {
            write!(out, " {:>8}", format!("{name} s"))?;
        }
        writeln!(out)?;
    }
    let mut cells: Vec<Vec<Cell>> = Vec::new();
    for &target in &targets {
        let row: Vec<Cell> = strategies
            .iter()
            .map(|&s| hunt(s, target, args.budget, args.trials, threads))
            .collect();
        let kind = match target {
            HuntTarget::Injected(_) => "injected",
            HuntTarget::Source(_) => "source",
        };
        // The median, and in how many trials a run failed when not in all.
        let runs = |c: &Cell| {
            let median = c.median().map_or("-".to_owned(), |r| r.to_string());
            if c.found() == c.trials.len() {
                median
            } else {
                format!("{median} ({}/{})", c.found(), c.trials.len())
            }
        };
        let best = row.iter().filter_map(Cell::median).min();
        let fewest = match best {
            None => "none found".to_owned(),
            Some(b) => strategies
                .iter()
                .zip(&row)
                .filter(|(_, c)| c.median() == Some(b))
                .map(|(s, _)| s.name())
                .collect::<Vec<_>>()
                .join(" = "),
        };
        if args.markdown {
            writeln!(
                out,
                "| {} | {kind} | {} | {fewest} | {} |",
                target.name(),
                row.iter().map(runs).collect::<Vec<_>>().join(" | "),
                row.iter()
                    .map(|c| wall(c.wall))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )?;
        } else {
            write!(out, "{:<width$} {kind:<8}", target.name())?;
            for c in &row {
                write!(out, " {:>12}", runs(c))?;
            }
            write!(out, "  {fewest:<12}")?;
            for c in &row {
                write!(out, " {:>8}", wall(c.wall))?;
            }
            writeln!(out)?;
        }
        out.flush()?;
        cells.push(row);
    }
    // Each strategy against random, over all rows and over the rows with room: where random
    // needs more than `ROOM` runs (or finds nothing), so that a strategy can need fewer.
    let roomy: Vec<&Vec<Cell>> = cells
        .iter()
        .filter(|row| row[0].median().is_none_or(|r| r > ROOM))
        .collect();
    for (k, strategy) in strategies.iter().enumerate().skip(1) {
        for (rows, over) in [
            (cells.iter().collect::<Vec<_>>(), String::new()),
            (
                roomy.clone(),
                format!(" where random needs more than {ROOM} runs"),
            ),
        ] {
            let mut tally: BTreeMap<&str, u64> = BTreeMap::new();
            for row in &rows {
                *tally.entry(versus_random(&row[0], &row[k])).or_default() += 1;
            }
            let found = |k: usize| rows.iter().filter(|r| r[k].median().is_some()).count();
            writeln!(
                out,
                "{} against random over {} targets{over}: {}; found {} (random {})",
                strategy.name(),
                rows.len(),
                tally
                    .iter()
                    .map(|(verdict, n)| format!("{verdict} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                found(k),
                found(0)
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
