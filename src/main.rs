//! The `flinksim` command.
//!
//! Exit codes: 0 the run met its expectations, 1 an expectation or invariant failed, 2 bad
//! input or usage. A closed stdout (`flinksim run … | head`) is not an error.

mod cli_compare;
mod cli_fuzz;
mod cli_merge;

use clap::{Parser, Subcommand, ValueEnum};
use flinksim::bug::Bug;
use flinksim::fuzz::isolate::{isolated, Panic};
use flinksim::report::{self, check_expectations, event_line, summary_json, summary_text};
use flinksim::run::{run, run_keeping, RunOptions};
use flinksim::scenario::{self, Scenario};
use flinksim::trace::Retain;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "flinksim",
    version,
    about = "A deterministic simulator of Apache Flink's fault-tolerance protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: the seed first, then a timeline, then a summary.
    Run {
        /// The scenario file (JSON).
        scenario: PathBuf,
        /// Use this seed instead of the scenario's.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the whole trace as JSON Lines to this file.
        #[arg(long, value_name = "FILE.jsonl")]
        trace: Option<PathBuf>,
        /// The largest trace file to write, like `500MB` or `2GiB`; past it the events stop
        /// (a `truncated` line says where) and the trace hash still covers the whole run.
        #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
        max_trace_size: u64,
        /// Write the summary as one JSON object to this file.
        #[arg(long, value_name = "FILE.json")]
        summary: Option<PathBuf>,
        /// Print only the summary.
        #[arg(long)]
        quiet: bool,
        /// Which events the timeline shows.
        #[arg(long, value_enum, default_value_t = Timeline::Protocol)]
        timeline: Timeline,
        /// Inject a bug (see `flinksim bugs`), overriding the scenario's `bug`.
        #[arg(long, value_name = "NAME", value_parser = parse_bug)]
        bug: Option<Bug>,
        /// Batch scenarios: also run the same scenario with job recovery off (a full
        /// restart after a JobManager crash, P2.6) and compare the figures.
        #[arg(long)]
        compare_baseline: bool,
        /// Write checkpoint N, once it completes, to FILE as a checkpoint a scenario's
        /// `restore_from` can start a job from (F1.6).
        #[arg(long, num_args = 2, value_names = ["N", "FILE"])]
        save_checkpoint: Option<Vec<String>>,
        /// Wake a lazily paced source at every step, not only for the steps something could
        /// see (F1.14 step 11's saving off): slower, and under `tie_break: insertion` the
        /// same trace unless a seen step ties with another actor's event (README).
        #[arg(long)]
        eager_sources: bool,
    },
    /// List the injectable bugs, the rule each breaks and the oracle that catches it.
    Bugs,
    /// Check scenario files without running them.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run generated scenarios over a range of seeds; shrink and save every violation.
    Fuzz(cli_fuzz::FuzzArgs),
    /// Join the results of a campaign's shards (`fuzz --shard K/N`) into one results.jsonl
    /// and print the campaign's summary; report missing and duplicate seeds.
    Merge(cli_merge::MergeArgs),
    /// Re-run the scenario a trace file records and compare, event by event.
    Replay(cli_fuzz::ReplayArgs),
    /// Run a scenario in several processes and compare their trace hashes.
    CheckDeterminism(cli_fuzz::CheckDeterminismArgs),
    /// Score the oracles: how soon a campaign catches each injectable bug.
    Mutants(cli_fuzz::MutantsArgs),
    /// Measure the exploration strategies: runs and wall time to the first failure, per
    /// injected bug and source mutant.
    Hunt(cli_fuzz::HuntArgs),
    /// Run one scenario under several designs over the same seeds and compare the
    /// distributions of checkpoint, recovery and commit figures
    Compare(cli_compare::CompareArgs),
    /// Narrate a run for a person: every event with what happened and why, citing the rule.
    Explain(report::cli::ExplainArgs),
    /// Convert a trace file for Perfetto, Mermaid or ShiViz.
    Export(report::cli::ExportArgs),
    /// Write a self-contained HTML space-time viewer of a trace file.
    View(report::cli::ViewArgs),
    /// Turn a recorded run of real Flink 2.3 (logs, REST dumps, commit log) into a conformance
    /// trace in flinksim's vocabulary.
    ImportFlinkLog(flinksim::conform::cli::ImportArgs),
    /// Check conformance traces against the model's rules; with --scenario, also compare the
    /// outcomes with the twin scenario's over a range of seeds.
    Conform(flinksim::conform::cli::ConformArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Timeline {
    /// Everything but record-level events (records sent, arrived, taken; back-pressure).
    Protocol,
    /// Every event.
    All,
}

/// A size in bytes: a whole number with an optional unit, `KB`/`MB`/`GB` (powers of 1000) or
/// `KiB`/`MiB`/`GiB` (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(format!("{text:?}: write a size like 500MB or 2GiB")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text:?}: write a size like 500MB or 2GiB"))
}

/// `FLINKSIM_SOURCE_MUTANT=NAME` switches a source mutant on for this process
/// (`flinksim::source_mutant`); only a build with the `source-mutants` feature has them.
fn source_mutant_from_env() -> Result<(), String> {
    use flinksim::source_mutant::{activate, SourceMutant};
    let Some(name) = std::env::var_os("FLINKSIM_SOURCE_MUTANT") else {
        return Ok(());
    };
    let name = name.to_string_lossy();
    let mutant = SourceMutant::from_name(&name).ok_or_else(|| {
        let known: Vec<&str> = SourceMutant::ALL.iter().map(|m| m.name()).collect();
        format!(
            "FLINKSIM_SOURCE_MUTANT={name:?}: unknown; the source mutants are: {}",
            known.join(", ")
        )
    })?;
    if activate(Some(mutant)) {
        Ok(())
    } else {
        Err(format!(
            "FLINKSIM_SOURCE_MUTANT={name}: this build has no source mutants; build it with \
             --features source-mutants"
        ))
    }
}

fn parse_bug(name: &str) -> Result<Bug, String> {
    Bug::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
        format!("unknown bug {name:?}; the bugs are: {}", known.join(", "))
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    report::install_interrupt_cleanup();
    if let Err(e) = source_mutant_from_env() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run {
            scenario,
            seed,
            trace,
            max_trace_size,
            summary,
            quiet,
            timeline,
            bug,
            compare_baseline,
            save_checkpoint,
            eager_sources,
        } => cmd_run(
            &scenario,
            RunArgs {
                seed,
                trace: trace.as_deref(),
                max_trace_size,
                summary: summary.as_deref(),
                quiet,
                timeline,
                bug,
                compare_baseline,
                save_checkpoint: save_checkpoint.as_deref(),
                eager_sources,
            },
        ),
        Command::Validate { files } => cmd_validate(&files),
        Command::Bugs => cmd_bugs(),
        Command::Fuzz(args) => cli_fuzz::cmd_fuzz(args),
        Command::Merge(args) => cli_merge::cmd_merge(args),
        Command::Replay(args) => cli_fuzz::cmd_replay(args),
        Command::CheckDeterminism(args) => cli_fuzz::cmd_check_determinism(args),
        Command::Mutants(args) => cli_fuzz::cmd_mutants(args),
        Command::Hunt(args) => cli_fuzz::cmd_hunt(args),
        Command::Compare(args) => cli_compare::cmd_compare(args),
        Command::Explain(args) => report::cli::cmd_explain(args),
        Command::Export(args) => report::cli::cmd_export(args),
        Command::View(args) => report::cli::cmd_view(args),
        Command::ImportFlinkLog(args) => flinksim::conform::cli::cmd_import(args),
        Command::Conform(args) => flinksim::conform::cli::cmd_conform(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn load_or_report(path: &Path) -> Option<Scenario> {
    match scenario::load(path) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

fn cmd_validate(files: &[PathBuf]) -> io::Result<ExitCode> {
    let mut ok = true;
    let mut out = io::stdout().lock();
    for file in files {
        match load_or_report(file) {
            Some(s) => {
                let graph = flinksim::graph::ExecutionGraph::build(&s.job);
                writeln!(
                    out,
                    "ok: {} ({}: {} vertices, {} subtasks, {} channels)",
                    file.display(),
                    s.name,
                    graph.vertices.len(),
                    graph.subtasks.len(),
                    graph.channels.len()
                )?;
            }
            None => ok = false,
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

fn cmd_bugs() -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    for bug in Bug::ALL {
        writeln!(out, "{}", bug.name())?;
        writeln!(out, "    breaks     {}", bug.rule())?;
        writeln!(out, "    caught by  {}", bug.caught_by())?;
        writeln!(out, "    effect     {}", bug.description())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Reports a panic of the model (exit 3): where, why, and how to see it again.
fn model_panicked(out: &mut impl Write, panic: &Panic, reproduce: &str) -> ExitCode {
    // Best effort: stdout may be gone; the message on stderr is what matters.
    let _ = out.flush();
    eprintln!(
        "error: the model {panic}\n  a panic is a broken internal invariant: a bug of the model \
         (or of the injected bug), never of the scenario\n  reproduce: {reproduce}"
    );
    ExitCode::from(3)
}

/// `flinksim run`'s options besides the scenario.
struct RunArgs<'a> {
    seed: Option<u64>,
    trace: Option<&'a Path>,
    max_trace_size: u64,
    summary: Option<&'a Path>,
    quiet: bool,
    timeline: Timeline,
    bug: Option<Bug>,
    compare_baseline: bool,
    /// `--save-checkpoint N FILE`, as given.
    save_checkpoint: Option<&'a [String]>,
    eager_sources: bool,
}

fn cmd_run(path: &Path, args: RunArgs<'_>) -> io::Result<ExitCode> {
    let RunArgs {
        seed,
        trace: trace_path,
        max_trace_size,
        summary: summary_path,
        quiet,
        timeline,
        bug,
        compare_baseline,
        save_checkpoint,
        eager_sources,
    } = args;
    let save = match save_checkpoint {
        None => None,
        Some([n, file]) => match n.parse::<u64>() {
            Ok(n) if n > 0 => Some((n, Path::new(file.as_str()))),
            _ => {
                eprintln!(
                    "error: --save-checkpoint {n:?}: expected a checkpoint id (1 or more), then                      a file"
                );
                return Ok(ExitCode::from(2));
            }
        },
        Some(_) => unreachable!("clap takes exactly two values"),
    };
    let outputs: Vec<(&str, &Path)> = [
        ("--trace", trace_path),
        ("--summary", summary_path),
        ("--save-checkpoint", save.map(|(_, p)| p)),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.map(|p| (flag, p)))
    .collect();
    report::refuse_overwriting_inputs(&[path], &outputs)?;
    let Some(mut scenario) = load_or_report(path) else {
        return Ok(ExitCode::from(2));
    };
    if bug.is_some() {
        scenario.bug = bug;
    }
    if compare_baseline && scenario.batch.is_none() {
        eprintln!(
            "error: --compare-baseline compares batch job recovery with a full restart; {} is a \
             streaming scenario",
            path.display()
        );
        return Ok(ExitCode::from(2));
    }
    let seed_used = seed.unwrap_or(scenario.seed);
    let mut out = io::BufWriter::new(io::stdout().lock());
    writeln!(
        out,
        "flinksim {}: scenario {} ({}), seed {seed_used}{}",
        env!("CARGO_PKG_VERSION"),
        scenario.name,
        path.display(),
        scenario
            .bug
            .map_or(String::new(), |b| format!(", injected bug {b}"))
    )?;
    if !scenario.description.is_empty() {
        writeln!(out, "{}", scenario.description)?;
    }
    out.flush()?;

    let retain = if trace_path.is_some() || (!quiet && timeline == Timeline::All) {
        Retain::Everything
    } else if quiet {
        Retain::Nothing
    } else {
        Retain::Protocol
    };
    // A panic is a broken invariant of the model: report it with the seed, never as a crash.
    let reproduce = match scenario.bug {
        Some(bug) => format!(
            "flinksim run {} --seed {seed_used} --bug {bug}",
            path.display()
        ),
        None => format!("flinksim run {} --seed {seed_used}", path.display()),
    };
    let reproduce = if eager_sources {
        format!("{reproduce} --eager-sources")
    } else {
        reproduce
    };
    let keep = save.map(|(n, _)| n);
    let report = match isolated(|| {
        run_keeping(
            &scenario,
            &RunOptions {
                seed,
                retain,
                eager_sources,
            },
            keep,
        )
    }) {
        Ok(report) => report,
        Err(panic) => return Ok(model_panicked(&mut out, &panic, &reproduce)),
    };

    if !quiet {
        writeln!(out)?;
        let mut hidden = 0u64;
        for (_, time, event) in report.trace.kept() {
            if timeline == Timeline::Protocol && event.is_data() {
                hidden += 1;
                continue;
            }
            let (actor, text) = event_line(&report.graph, event);
            writeln!(out, "{:>14}  {actor:<18} {text}", time.to_string())?;
        }
        // A buffer's record-level details (F1.14 step 10) are hidden with it but are no trace events.
        let data_events =
            report.trace.len() - report.trace.kept_events() + hidden - report.trace.details();
        if timeline == Timeline::Protocol && data_events > 0 {
            writeln!(
                out,
                "({data_events} record-level events not shown; --timeline all shows them)"
            )?;
        }
    }

    let failures = check_expectations(&scenario.expect, &report);
    // P2.6: the same run with job recovery off is the baseline recovery is measured against.
    let baseline = if compare_baseline {
        let mut off = scenario.clone();
        if let Some(b) = off.batch.as_mut() {
            b.job_recovery = false;
        }
        // The baseline restarts; a reconciling scenario is compared with that too.
        off.jobmaster.failover = scenario::Failover::Restart;
        let options = RunOptions {
            seed,
            retain: Retain::Nothing,
            eager_sources: false,
        };
        match isolated(|| run(&off, &options)) {
            Ok(base) => Some(base),
            Err(panic) => {
                let reproduce = format!("{reproduce} --compare-baseline");
                return Ok(model_panicked(&mut out, &panic, &reproduce));
            }
        }
    } else {
        None
    };
    if let Some(trace_path) = trace_path {
        let written = flinksim::fuzz::trace_file::write_trace(
            trace_path,
            &scenario,
            &report,
            max_trace_size,
        )?;
        if written.truncated {
            eprintln!(
                "note: {} holds the first {} of {} trace events (--max-trace-size {max_trace_size} \
                 bytes); its end line still has the whole run's trace hash",
                trace_path.display(),
                written.events,
                report.trace.len()
            );
        }
    }
    if let Some((n, file)) = save {
        let json = match &report.saved_checkpoint {
            None => Err(format!(
                "checkpoint {n} did not complete in this run ({} completed)",
                report.completed_checkpoints()
            )),
            Some(saved) => report::checkpoint_file::checkpoint_json(&report.graph, saved),
        };
        match json {
            Ok(json) => report::write_atomically(file, |w| {
                serde_json::to_writer_pretty(&mut *w, &json)?;
                writeln!(w)
            })
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot write {}: {e}", file.display()))
            })?,
            Err(why) => {
                out.flush()?;
                eprintln!("error: --save-checkpoint: {why}; nothing written");
                return Ok(ExitCode::from(2));
            }
        }
    }
    if let Some(summary_path) = summary_path {
        let mut summary = summary_json(&scenario.name, &report, &failures);
        if let Some(base) = &baseline {
            summary["baseline"] = summary_json(&scenario.name, base, &[]);
        }
        report::write_atomically(summary_path, |w| {
            serde_json::to_writer_pretty(&mut *w, &summary)?;
            writeln!(w)
        })
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", summary_path.display()),
            )
        })?;
    }
    write!(
        out,
        "{}",
        summary_text(&scenario.name, &report, &failures, &reproduce)
    )?;
    if let Some(base) = &baseline {
        write!(out, "{}", report::batch::baseline_text(&report, base))?;
    }
    out.flush()?;
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
