//! `flinksim merge`: printing and file handling around `flinksim::fuzz::merge`. Nothing is
//! printed or written until every input has been read and checked, so a refused merge leaves
//! one error message (exit 2) and no output; the outputs are each written whole (a temporary
//! file renamed), `results.jsonl` last.

use crate::cli_fuzz::{print_table, with_path};
use clap::Args;
use flinksim::fuzz::coverage::{coverage, write_coverage};
use flinksim::fuzz::merge::{merge, read_shard, reproducers, results_path, Merged, Missing};
use flinksim::fuzz::Outcome;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct MergeArgs {
    /// The shards' output directories (`fuzz --shard K/N --out DIR`), or their results.jsonl.
    #[arg(required = true, value_name = "DIR")]
    shards: Vec<PathBuf>,
    /// Where to write the merged results.jsonl and the shards' reproducers.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

fn refuse(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Exit codes: 2 refused (nothing written), 4 incomplete (seeds missing or given twice: not a
/// whole campaign, whatever it found), else `fuzz`'s: 3 some run panicked, 1 some violation,
/// 0 clean. Incompleteness comes first because a script that merges a cluster's shards must
/// not mistake a campaign with holes for a finished one; the summary still shows what the
/// seeds present found.
pub fn cmd_merge(args: MergeArgs) -> io::Result<ExitCode> {
    let files = args
        .shards
        .iter()
        .map(|input| read_shard(&results_path(input)).map_err(|e| refuse(e.0)))
        .collect::<io::Result<Vec<_>>>()?;
    let merged = merge(&files).map_err(|e| refuse(e.0))?;
    // The shard directories, for their reproducers; `--out` must be none of them, or the
    // merged file would replace a shard's.
    let dirs: Vec<PathBuf> = files
        .iter()
        .map(|f| match f.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        })
        .collect();
    if let Ok(out) = args.out.canonicalize() {
        if let Some(dir) = dirs
            .iter()
            .find(|d| d.canonicalize().ok() == Some(out.clone()))
        {
            return Err(refuse(format!(
                "--out {} is the shard directory {}: merge into a directory of its own",
                args.out.display(),
                dir.display()
            )));
        }
    }
    let copies = gather_reproducers(&dirs)?;

    std::fs::create_dir_all(&args.out).map_err(|e| with_path(&args.out, e))?;
    let mut copied = Vec::new();
    for (name, (from, bytes)) in &copies {
        let to = args.out.join(name);
        flinksim::report::write_atomically(&to, |w| w.write_all(bytes))
            .map_err(|e| with_path(&to, e))
            .map_err(|e| io::Error::new(e.kind(), format!("{e} (copying {})", from.display())))?;
        copied.push(to);
    }
    let results = args.out.join("results.jsonl");
    let text = merged.to_jsonl();
    flinksim::report::write_atomically(&results, |w| w.write_all(text.as_bytes()))
        .map_err(|e| with_path(&results, e))?;

    let mut out = io::stdout().lock();
    print_summary(&mut out, &merged, files.len(), &copied)?;
    writeln!(out, "results: {}", results.display())?;
    let seeds = merged.results();
    Ok(if !merged.complete() {
        ExitCode::from(4)
    } else if seeds.iter().any(|r| r.outcome == Outcome::Panic) {
        ExitCode::from(3)
    } else if seeds.iter().any(|r| r.outcome == Outcome::Violation) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The `seed-*` files of every shard directory, by file name. A seed belongs to one shard, so
/// a name found twice is the same reproducer given twice (copied once), unless the contents
/// differ, which is refused like any other disagreement between shards.
fn gather_reproducers(dirs: &[PathBuf]) -> io::Result<BTreeMap<String, (PathBuf, Vec<u8>)>> {
    let mut copies: BTreeMap<String, (PathBuf, Vec<u8>)> = BTreeMap::new();
    for dir in dirs {
        for path in reproducers(dir).map_err(|e| with_path(dir, e))? {
            let bytes = std::fs::read(&path).map_err(|e| with_path(&path, e))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match copies.get(&name) {
                Some((other, theirs)) if *theirs != bytes => {
                    return Err(refuse(format!(
                        "{} differs from {}: two shards wrote one reproducer differently",
                        path.display(),
                        other.display()
                    )))
                }
                Some(_) => {}
                None => {
                    copies.insert(name, (path, bytes));
                }
            }
        }
    }
    Ok(copies)
}

/// What `fuzz` prints of a campaign (outcomes, invariants, panics, coverage), then what the
/// merge lacks, the reproducers it copied, and whether it is whole.
fn print_summary(
    out: &mut impl Write,
    merged: &Merged,
    inputs: usize,
    copied: &[PathBuf],
) -> io::Result<()> {
    let header = &merged.header;
    let expected = header.seeds_of(None).count();
    writeln!(
        out,
        "flinksim {} merge: {inputs} of {} shards, seeds {}..{}, {} of {expected} seeds, {}",
        header.version,
        merged.shards,
        header.seeds.start,
        header.seeds.end,
        merged.lines.len(),
        header.describe()
    )?;
    let results = merged.results();
    print_table(out, &results, Some(&header.reproduce_flags()))?;
    if merged.has_probes() {
        write_coverage(out, &coverage(&results))?;
    }
    for missing in &merged.missing {
        writeln!(out, "missing: {}", describe_missing(missing))?;
    }
    for duplicate in &merged.duplicates {
        let at: Vec<String> = duplicate
            .at
            .iter()
            .map(|(path, line)| format!("{}:{line}", path.display()))
            .collect();
        writeln!(
            out,
            "duplicate: seed {} at {}",
            duplicate.seed,
            at.join(", ")
        )?;
    }
    for path in copied.iter().filter(|p| is_scenario(p)) {
        writeln!(out, "reproduce: flinksim run {}", path.display())?;
    }
    if !merged.complete() {
        let lacking: usize = merged.missing.iter().map(|m| m.seeds.len()).sum();
        writeln!(
            out,
            "incomplete: {lacking} of {expected} seeds missing, {} given more than once",
            merged.duplicates.len()
        )?;
    }
    Ok(())
}

fn is_scenario(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// `shard 2/3 absent: 20 seeds (2, 5, 8, 11, 14, …)`, or `… cut short: 7 of 20 seeds (…)`.
fn describe_missing(missing: &Missing) -> String {
    let mut seeds: Vec<String> = missing.seeds.iter().take(5).map(u64::to_string).collect();
    if missing.seeds.len() > 5 {
        seeds.push("…".into());
    }
    let shard = missing
        .shard
        .map_or("the campaign".to_owned(), |(k, n)| format!("shard {k}/{n}"));
    if missing.absent {
        format!(
            "{shard} absent: {} seeds ({})",
            missing.seeds.len(),
            seeds.join(", ")
        )
    } else {
        format!(
            "{shard} cut short (--time-limit?): {} of {} seeds ({})",
            missing.seeds.len(),
            missing.of,
            seeds.join(", ")
        )
    }
}
