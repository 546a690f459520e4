//! The teaching subcommands' arguments and bodies (`explain`, `export`, `view`), kept here so
//! `main.rs` only names them and dispatches.

use super::explain::{
    narrate, rules_cited, violation_narration, write_narration, ExplainStyle, Repeats,
};
use super::export;
use super::{check_expectations, summary_text};
use crate::run::{run, RunOptions, RunReport};
use crate::scenario::Scenario;
use crate::trace::Retain;
use clap::{Args, ValueEnum};
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// When to colour the output.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// When stdout is a terminal and neither `NO_COLOR` nor `CLICOLOR=0` is set.
    Auto,
    Always,
    Never,
}

/// `flinksim explain`.
#[derive(Args)]
pub struct ExplainArgs {
    /// The scenario file (JSON).
    #[arg(required_unless_present = "trace")]
    pub scenario: Option<PathBuf>,
    /// Explain the run a trace file records (`run --trace`, a campaign's reproducer, a shrunk
    /// counterexample) instead of a scenario: its header's scenario, seed and bug are run
    /// again, and the replay must match the file's trace hash.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "seed", "bug"])]
    pub trace: Option<PathBuf>,
    /// Use this seed instead of the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Key moments only, without the routine ones (an alignment that took no time), and
    /// every violation.
    #[arg(long)]
    pub brief: bool,
    /// Pause after each key moment until Enter is pressed (only when stdout is a terminal).
    #[arg(long)]
    pub step: bool,
    /// Colour the narration.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Inject a bug (see `flinksim bugs`), overriding the scenario's `bug`: the narration
    /// then shows where the oracles saw the run break a rule.
    #[arg(long, value_name = "NAME", value_parser = parse_bug)]
    pub bug: Option<crate::bug::Bug>,
    /// Narrate only these actors, comma-separated, named as in the narration
    /// (`sink[0],JobMaster,Checkpointing`).
    #[arg(long, value_delimiter = ',')]
    pub actor: Vec<String>,
    /// Narrate only from this simulated time on (e.g. `15ms`).
    #[arg(long, value_parser = export::parse_time)]
    pub from: Option<u64>,
    /// Narrate only up to this simulated time (inclusive).
    #[arg(long, value_parser = export::parse_time)]
    pub to: Option<u64>,
    /// Start each line with its trace event number, as violations name events.
    #[arg(long)]
    pub numbers: bool,
}

/// How the scenario file writes a setting.
fn json_name<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
}

fn parse_bug(name: &str) -> Result<crate::bug::Bug, String> {
    crate::bug::Bug::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = crate::bug::Bug::ALL.iter().map(|b| b.name()).collect();
        format!("unknown bug {name:?}; the bugs are: {}", known.join(", "))
    })
}

/// What `explain` narrates: a scenario file (with `--seed` and `--bug`), or the run a trace
/// file recorded, checked to be the same run by its trace hash.
fn explained_run(args: &ExplainArgs) -> Result<(Scenario, PathBuf, RunReport), String> {
    let retain = Retain::Protocol;
    if let Some(path) = &args.trace {
        let recorded = crate::fuzz::replay::read(path).map_err(|e| e.to_string())?;
        let report = run(
            &recorded.scenario,
            &RunOptions {
                seed: Some(recorded.seed),
                retain,
                eager_sources: false,
            },
        );
        return match recorded.trace_hash() {
            Some(hash) if hash == report.trace_hash => Ok((recorded.scenario, path.clone(), report)),
            Some(hash) => Err(format!(
                "{}: the file's trace (hash {hash:#018x}) is not the run this version makes of its header (hash {:#018x}); `flinksim replay {}` shows where they part",
                path.display(),
                report.trace_hash,
                path.display()
            )),
            None => Err(format!("{}: no `end` line with a readable trace hash, so the run cannot be checked to be the one recorded", path.display())),
        };
    }
    let Some(path) = &args.scenario else {
        return Err("give a scenario file or --trace FILE".to_owned());
    };
    let mut scenario = crate::scenario::load(path).map_err(|e| e.to_string())?;
    if args.bug.is_some() {
        scenario.bug = args.bug;
    }
    let report = run(
        &scenario,
        &RunOptions {
            seed: args.seed,
            retain,
            eager_sources: false,
        },
    );
    Ok((scenario, path.clone(), report))
}

pub fn cmd_explain(args: ExplainArgs) -> io::Result<ExitCode> {
    let (scenario, file, report) = match explained_run(&args) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let stdout = io::stdout();
    let color = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never,
    };
    // Pausing only makes sense with a person at the terminal: piped output runs through.
    let step = args.step && stdout.is_terminal() && io::stdin().is_terminal();
    let mut out = io::BufWriter::new(stdout.lock());
    writeln!(
        out,
        "flinksim explain: scenario {} ({}), seed {}{}",
        scenario.name,
        file.display(),
        report.seed,
        scenario
            .bug
            .map_or(String::new(), |b| format!(", injected bug {b}"))
    )?;
    if !scenario.description.is_empty() {
        writeln!(out, "{}", scenario.description)?;
    }
    // The settings as the scenario file spells them, and the recovery the run will take.
    let spelled = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let failover = match scenario.jobmaster.failover {
        crate::scenario::Failover::Restart => "restart",
        crate::scenario::Failover::Reconcile => "reconcile",
    };
    match (&scenario.batch, &scenario.checkpointing) {
        (Some(b), _) => writeln!(
            out,
            "Batch job (P2): job recovery {}, failover: {failover} (rules: docs/rules.md)",
            if b.recovery_enabled() { "on (FLIP-383)" } else { "off (a crash restarts the job, P2.6)" }
        )?,
        (None, Some(c)) => writeln!(
            out,
            "Checkpointing: finish_protocol {}, mode {}, failover: {failover} (rules: docs/rules.md)",
            spelled(json_name(&c.finish_protocol)),
            spelled(json_name(&c.mode))
        )?,
        (None, None) => writeln!(out, "Checkpointing is disabled; failover: {failover}.")?,
    }
    writeln!(out)?;
    let style = ExplainStyle {
        color,
        numbers: args.numbers,
    };
    let narrations = narrate(&scenario, &report);
    // Each violation is told right after the event where it was first visible (or, when that
    // was a record-level event nobody narrates, before the next narrated one).
    let violations: Vec<_> = report
        .violations
        .iter()
        .map(|v| violation_narration(v, scenario.bug))
        .collect();
    let shown = |n: &super::explain::Narration| {
        let t = n.time.as_nanos();
        args.from.is_none_or(|from| t >= from)
            && args.to.is_none_or(|to| t <= to)
            && (args.actor.is_empty()
                || n.actor
                    .split(',')
                    .any(|a| args.actor.iter().any(|x| x == a)))
    };
    // Each violation right after the event where it was first visible (or, when that was a
    // record-level event nobody narrates, before the next narrated one): a stable sort by
    // event index, violations last among equals.
    let mut told: Vec<&super::explain::Narration> = narrations.iter().chain(&violations).collect();
    told.sort_by_key(|n| (n.index, n.key == Some("violation")));
    let mut stdin = io::stdin().lock();
    let mut repeats = Repeats::default();
    let shown_all = told
        .into_iter()
        .filter(|n| shown(n) && (!args.brief || n.key.is_some()));
    // The header ended with a blank line; so does every key moment.
    let mut after_blank = true;
    for n in shown_all {
        let short = repeats.told_before(n);
        write_narration(&mut out, n, &style, short, after_blank)?;
        after_blank = n.key.is_some();
        if step && n.key.is_some() {
            write!(out, "(Enter to continue)")?;
            out.flush()?;
            let mut line = String::new();
            if stdin.read_line(&mut line)? == 0 {
                break;
            }
        }
    }
    let cited: Vec<String> = rules_cited(&narrations)
        .into_iter()
        .map(|(rule, count)| format!("{rule} ×{count}"))
        .collect();
    writeln!(out, "\nRules cited: {}", cited.join(", "))?;
    let failures = check_expectations(&scenario.expect, &report);
    let reproduce = match &args.trace {
        Some(path) => format!("flinksim explain --trace {}", path.display()),
        None => format!("flinksim explain {} --seed {}", file.display(), report.seed),
    };
    write!(
        out,
        "{}",
        summary_text(&scenario.name, &report, &failures, &reproduce)
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `flinksim export`'s formats.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Chrome / Perfetto trace-event JSON (ui.perfetto.dev).
    Perfetto,
    /// A Mermaid sequence diagram (short windows only).
    Mermaid,
    /// A ShiViz log with vector clocks.
    Shiviz,
}

/// `flinksim export`.
#[derive(Args)]
pub struct ExportArgs {
    /// A trace written by `flinksim run --trace FILE.jsonl`.
    pub trace: PathBuf,
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Export only from this simulated time on (e.g. `15ms`).
    #[arg(long, value_parser = export::parse_time)]
    pub from: Option<u64>,
    /// Export only up to this simulated time (inclusive).
    #[arg(long, value_parser = export::parse_time)]
    pub to: Option<u64>,
    /// Export only what happens on these hosts, comma-separated (`map[0],JobMaster`).
    #[arg(long, value_delimiter = ',')]
    pub actors: Vec<String>,
    /// Write here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn cmd_export(args: ExportArgs) -> io::Result<ExitCode> {
    if let Some(output) = &args.output {
        super::refuse_overwriting_inputs(&[&args.trace], &[("-o", output)])?;
    }
    let trace = export::load_trace(&args.trace)?;
    if !args.actors.is_empty() {
        let known = export::perfetto::hosts(&trace);
        if let Some(bad) = args.actors.iter().find(|a| !known.contains(a)) {
            eprintln!(
                "error: no host {bad:?} in {}; the hosts are: {}",
                args.trace.display(),
                known.join(", ")
            );
            return Ok(ExitCode::from(2));
        }
    }
    let window = export::Window {
        from_ns: args.from,
        to_ns: args.to,
        actors: (!args.actors.is_empty()).then(|| args.actors.iter().cloned().collect()),
    };
    let text = match args.format {
        ExportFormat::Perfetto => export::perfetto::export_text(&trace, &window),
        ExportFormat::Mermaid => match export::mermaid::export(&trace, &window) {
            Ok(text) => text,
            Err(too_large) => {
                eprintln!("error: {too_large}");
                return Ok(ExitCode::from(2));
            }
        },
        ExportFormat::Shiviz => export::shiviz::export(&trace, &window),
    };
    match &args.output {
        Some(path) => {
            super::write_atomically(path, |w| w.write_all(text.as_bytes())).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
            })?
        }
        None => io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `flinksim view`.
#[derive(Args)]
pub struct ViewArgs {
    /// A trace written by `flinksim run --trace FILE.jsonl`.
    pub trace: PathBuf,
    /// A second trace, shown below the first, both marked where they first part.
    #[arg(long, value_name = "TRACE")]
    pub compare: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long, value_name = "FILE.html")]
    pub output: PathBuf,
}

pub fn cmd_view(args: ViewArgs) -> io::Result<ExitCode> {
    let mut inputs = vec![args.trace.as_path()];
    inputs.extend(args.compare.as_deref());
    super::refuse_overwriting_inputs(&inputs, &[("-o", &args.output)])?;
    let trace = export::load_trace(&args.trace)?;
    let (html, events) = match &args.compare {
        None => (
            super::viewer::html(&trace),
            format!("{} events", trace.events.len()),
        ),
        Some(other) => {
            let other = export::load_trace(other)?;
            (
                super::viewer::compare_html(&trace, &other),
                format!("{} and {} events", trace.events.len(), other.events.len()),
            )
        }
    };
    super::write_atomically(&args.output, |w| w.write_all(html.as_bytes())).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write {}: {e}", args.output.display()),
        )
    })?;
    eprintln!(
        "wrote {} ({events}); open it in a browser, no network needed",
        args.output.display(),
    );
    Ok(ExitCode::SUCCESS)
}
