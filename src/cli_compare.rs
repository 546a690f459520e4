//! `flinksim compare`: the command around [`flinksim::compare`].

use crate::cli_fuzz::{default_threads, parse_seeds};
use clap::Args;
use flinksim::compare::{self, Vary};
use flinksim::report;
use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CompareArgs {
    /// The scenario file (JSON).
    scenario: PathBuf,
    /// A field of the scenario (a JSON path such as `checkpointing.finish_protocol` or
    /// `job.vertices[0].records`) and the values to compare, `FIELD=V1,V2,…`; several
    /// `--vary` compare every combination.
    #[arg(long, required = true, value_name = "FIELD=V1,V2,…", value_parser = Vary::parse)]
    vary: Vec<Vary>,
    /// The seeds every variant runs, `A..B` (B excluded).
    #[arg(long, default_value = "0..100", value_parser = parse_seeds)]
    seeds: Range<u64>,
    /// Worker threads. Results do not depend on it.
    #[arg(long, default_value_t = default_threads())]
    threads: usize,
    /// Also write the comparison as a self-contained HTML page of charts.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Instead of the distributions, show where the first two variants' runs of this seed
    /// part: the first protocol event that differs, with context.
    #[arg(long, value_name = "SEED")]
    diff: Option<u64>,
}

/// The most runs one comparison may start (variants × seeds): a bound like `validate`'s, so a
/// typo in a seed range ends with a message rather than hours later.
const MAX_RUNS: u64 = 10_000_000;

pub fn cmd_compare(args: CompareArgs) -> io::Result<ExitCode> {
    if let Some(html) = &args.html {
        report::refuse_overwriting_inputs(&[&args.scenario], &[("--html", html)])?;
    }
    let file = args.scenario.display().to_string();
    let text = match std::fs::read_to_string(&args.scenario) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let variants = match compare::variants(&text, &file, &args.vary) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let runs = variants.len() as u64 * (args.seeds.end - args.seeds.start);
    if runs > MAX_RUNS {
        eprintln!(
            "error: {} variants × {} seeds is {runs} runs; at most {MAX_RUNS} in one comparison",
            variants.len(),
            args.seeds.end - args.seeds.start
        );
        return Ok(ExitCode::from(2));
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    if let Some(seed) = args.diff {
        return match compare::diff(&variants, seed, 6) {
            Ok(text) => {
                write!(out, "{text}")?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                out.flush()?;
                eprintln!("error: {e}");
                Ok(ExitCode::from(if e.starts_with("--diff") { 2 } else { 3 }))
            }
        };
    }
    let fields: Vec<&str> = args.vary.iter().map(|v| v.field.as_str()).collect();
    writeln!(
        out,
        "flinksim {} compare: {file}, seeds {}..{}, {} variants of {}",
        env!("CARGO_PKG_VERSION"),
        args.seeds.start,
        args.seeds.end,
        variants.len(),
        fields.join(" × ")
    )?;
    out.flush()?;
    let samples = match compare::measure(&variants, args.seeds.clone(), args.threads) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}\n  a panic is a bug of the model, never of the scenario");
            return Ok(ExitCode::from(3));
        }
    };
    write!(out, "{}", compare::table(&variants, &samples))?;
    if let Some(path) = &args.html {
        let title = format!(
            "{file}: {} variants over seeds {}..{}",
            variants.len(),
            args.seeds.start,
            args.seeds.end
        );
        let page = compare::html(&title, &variants, &samples);
        report::write_atomically(path, |w| w.write_all(page.as_bytes())).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        })?;
        writeln!(out, "\nchart: {}", path.display())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
