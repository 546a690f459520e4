//! The benchmark suite shared by the bench targets of `Cargo.toml` (see benches/README.md).
//!
//! Every section adds rows to one [`Table`]; `cargo bench` (target `all`) runs every section and
//! prints one table, with the ratios computed from figures measured in that same run. The other
//! targets run one section each: `cargo bench --bench kernel|model|scale|fuzz`.
//!
//! The figures are throughputs of runs that last from tens of milliseconds to seconds, so the
//! suite times them itself (best of a few repeats, to report the code's speed rather than the
//! machine's noise) instead of using a statistics harness built for microbenchmarks.

#![allow(dead_code)] // each target uses some of the sections

pub mod alloc;
pub mod fuzz;
pub mod kernel;
pub mod model;
pub mod scale;

use std::path::PathBuf;

/// One row: section, what was measured, the figure, and how it compares (a ratio or a target).
pub struct Row {
    pub section: &'static str,
    pub what: String,
    pub figure: String,
    pub note: String,
}

#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub fn row(
        &mut self,
        section: &'static str,
        what: impl Into<String>,
        figure: impl Into<String>,
        note: impl Into<String>,
    ) {
        let row = Row {
            section,
            what: what.into(),
            figure: figure.into(),
            note: note.into(),
        };
        // Progress on stderr, so a long run shows life; the table goes to stdout at the end.
        eprintln!(
            "  {} | {} | {} | {}",
            row.section, row.what, row.figure, row.note
        );
        self.rows.push(row);
    }

    pub fn print(&self) {
        println!();
        println!("machine: {}", machine());
        println!();
        println!("| section | measurement | figure | ratio / target |");
        println!("| --- | --- | ---: | --- |");
        for r in &self.rows {
            println!("| {} | {} | {} | {} |", r.section, r.what, r.figure, r.note);
        }
    }
}

/// The CPU model and count, from /proc/cpuinfo (Linux), for the table's header.
pub fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cpus} CPUs, {}", std::env::consts::ARCH)
}

/// A file of the repository, from the bench's working directory (cargo runs benches in the
/// package root).
/// CPU time of this process so far (user and system), in seconds, from /proc/self/stat (Linux,
/// clock ticks of 10 ms): on a machine shared with other builds it is the steadier figure, as
/// wall time includes waiting for a core.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces, so split after its ')'): utime and
    // stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

pub fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// `"12.3 M"`-style formatting of a rate.
pub fn millions(x: f64) -> String {
    format!("{:.2} M", x / 1e6)
}

/// `"met"` or `"MISSED"` against a target.
pub fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// Runs `measure` `repeats` times and keeps the shortest wall time.
pub fn best_of(repeats: usize, mut measure: impl FnMut() -> std::time::Duration) -> f64 {
    (0..repeats)
        .map(|_| measure())
        .min()
        .expect("repeats is not zero")
        .as_secs_f64()
}
