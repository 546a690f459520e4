//! The conformance subcommands, `import-flink-log` and `conform`: arguments, output, exit
//! codes (0 conforms, 1 departures, 2 bad input).

use super::check::{self, format_ns, Report};
use super::outcomes::{rows, run_twin};
use super::trace::Trace;
use super::{import, InputError};
use clap::Args;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// `flinksim import-flink-log`.
#[derive(Args)]
pub struct ImportArgs {
    /// A recorded run: `conformance/runs/<job>/run-<N>/`.
    pub run_dir: PathBuf,
    /// The conformance trace to write (JSON Lines).
    #[arg(short = 'o', long, value_name = "TRACE.jsonl")]
    pub output: PathBuf,
}

pub fn cmd_import(args: ImportArgs) -> io::Result<ExitCode> {
    let trace = match import::import(&args.run_dir) {
        Ok(t) => t,
        Err(e) => return Ok(bad_input(&e)),
    };
    let text = trace.to_text();
    crate::report::write_atomically(&args.output, |w| w.write_all(text.as_bytes())).map_err(
        |e| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", args.output.display()),
            )
        },
    )?;
    let mut out = io::stdout().lock();
    let s = &trace.summary;
    writeln!(
        out,
        "imported {} ({} run {}): {} log lines, {} mapped, {} known without an event, {} unmapped, {} ignored; {} commit lines, {} output lines; {} events -> {}",
        args.run_dir.display(),
        trace.header.job,
        trace.header.run,
        s.lines,
        s.mapped,
        s.known,
        s.unmapped_total(),
        s.ignored_total(),
        s.commits,
        s.outputs,
        s.events,
        args.output.display()
    )?;
    for (logger, u) in &s.unmapped {
        writeln!(out, "  unmapped {:>6}  {logger}", u.count)?;
        for e in &u.examples {
            writeln!(out, "      e.g. {e}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn bad_input(e: &InputError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// `flinksim conform`.
#[derive(Args)]
pub struct ConformArgs {
    /// Conformance traces written by `flinksim import-flink-log`.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// The twin scenario: also run it over `--seeds` and compare the outcomes that do not
    /// depend on timing.
    #[arg(long, value_name = "TWIN.json")]
    pub scenario: Option<PathBuf>,
    /// Seeds of the twin, `A..B` (B excluded).
    #[arg(long, default_value = "0..20", value_parser = parse_seeds)]
    pub seeds: std::ops::Range<u64>,
}

fn parse_seeds(s: &str) -> Result<std::ops::Range<u64>, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected A..B"))?;
    let a: u64 = a.parse().map_err(|_| format!("{a:?} is not a seed"))?;
    let b: u64 = b.parse().map_err(|_| format!("{b:?} is not a seed"))?;
    if b <= a {
        return Err(format!("{s:?}: the range is empty"));
    }
    Ok(a..b)
}

pub fn cmd_conform(args: ConformArgs) -> io::Result<ExitCode> {
    // Read everything first: bad input is reported before any verdict.
    let mut traces = Vec::new();
    for path in &args.traces {
        match Trace::read(path) {
            Ok(t) => traces.push((path, t)),
            Err(e) => return Ok(bad_input(&e)),
        }
    }
    let twin = match &args.scenario {
        Some(p) => match crate::scenario::load(p) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        },
        None => None,
    };
    let mut reports: Vec<Report> = Vec::new();
    for (path, trace) in &traces {
        match check::check(trace) {
            Ok(r) => reports.push(r),
            Err(e) => {
                return Ok(bad_input(&InputError::new(
                    format!("{}: {}", path.display(), e.place),
                    e.message,
                )))
            }
        }
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut departures = 0usize;
    for ((path, trace), report) in traces.iter().zip(&reports) {
        let h = &trace.header;
        writeln!(
            out,
            "{} ({} run {}, Flink {}, {}): {} events, {} departures",
            path.display(),
            h.job,
            h.run,
            h.flink_version,
            h.mode,
            trace.entries.len(),
            report.departures.len()
        )?;
        for d in &report.departures {
            writeln!(
                out,
                "  line {:>6}  {:>12}  {} ({}): {}",
                d.line,
                format_ns(d.time),
                d.rule,
                d.section,
                d.message
            )?;
        }
        for (id, n) in &report.differences {
            writeln!(
                out,
                "  difference {id} ×{n} (documented: README \"Where flinksim differs from Flink 2.3\")"
            )?;
        }
        for s in &report.skipped {
            writeln!(out, "  not checked: {s}")?;
        }
        departures += report.departures.len();
    }
    if let Some(scenario) = &twin {
        let twins = run_twin(scenario, args.seeds.clone());
        let batch = scenario.batch.is_some();
        for ((path, trace), report) in traces.iter().zip(&reports) {
            writeln!(
                out,
                "\n{} vs twin {} over seeds {}..{}:",
                path.display(),
                scenario.name,
                args.seeds.start,
                args.seeds.end
            )?;
            writeln!(out, "  {:<38} {:<34} twin (seeds)", "outcome", "Flink 2.3")?;
            let mut agree = 0;
            let mut compared = 0;
            for row in rows(&report.outcomes, &twins, batch) {
                let twin_text = row
                    .twin
                    .iter()
                    .map(|(v, n)| format!("{v} ×{n}"))
                    .collect::<Vec<_>>()
                    .join(" | ");
                let mark = match row.agrees {
                    Some(true) => {
                        agree += 1;
                        compared += 1;
                        "="
                    }
                    Some(false) => {
                        compared += 1;
                        "≠"
                    }
                    None => "~",
                };
                writeln!(
                    out,
                    "  {mark} {:<36} {:<34} {twin_text}",
                    row.what, row.real
                )?;
            }
            let mean_ns = twins.iter().map(|t| t.wall_ns).sum::<u128>() / twins.len() as u128;
            let real_ms = trace.header.wall_ms as f64;
            let twin_ms = mean_ns as f64 / 1e6;
            writeln!(
                out,
                "  outcomes agreeing: {agree} of {compared}; wall time: Flink {real_ms:.0} ms, twin {twin_ms:.3} ms per seed (×{:.0} faster)",
                if twin_ms > 0.0 { real_ms / twin_ms } else { 0.0 }
            )?;
        }
    }
    out.flush()?;
    Ok(if departures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
