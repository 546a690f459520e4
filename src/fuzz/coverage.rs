//! The coverage table of a campaign: for every probe (`crate::probes`), how many runs hit it
//! and the first seed that did, then the probes no run hit. A probe never hit is a situation
//! the campaign cannot have tested, however clean its verdicts: a gap in the generator, or a
//! situation a protocol rules out.

use super::campaign::SeedResult;
use crate::probes::Probe;
use std::io::{self, Write};

/// One probe's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRow {
    pub probe: Probe,
    /// Runs that hit it.
    pub runs: u64,
    /// The lowest seed that hit it.
    pub first_seed: Option<u64>,
}

/// Every probe's row, in [`Probe::ALL`] order. Only seeds and their probe sets count, so the
/// table is the same for any thread count, and for shards merged in any order.
pub fn coverage(results: &[SeedResult]) -> Vec<ProbeRow> {
    Probe::ALL
        .into_iter()
        .map(|probe| {
            let hits = results.iter().filter(|r| r.probes.contains(probe));
            ProbeRow {
                probe,
                runs: hits.clone().count() as u64,
                first_seed: hits.map(|r| r.seed).min(),
            }
        })
        .collect()
}

/// Writes the table `probe | runs that hit it | first seed`, then `never hit: ...` (in probe
/// order), or `every probe was hit`.
pub fn write_coverage(out: &mut impl Write, rows: &[ProbeRow]) -> io::Result<()> {
    let width = Probe::ALL.iter().map(|p| p.id().len()).max().unwrap_or(0);
    writeln!(out, "{:<width$}  {:>6}  first seed", "probe", "runs")?;
    for row in rows.iter().filter(|r| r.runs > 0) {
        let first = row.first_seed.map_or(String::new(), |s| s.to_string());
        writeln!(out, "{:<width$}  {:>6}  {first}", row.probe.id(), row.runs)?;
    }
    let never: Vec<&str> = rows
        .iter()
        .filter(|r| r.runs == 0)
        .map(|r| r.probe.id())
        .collect();
    if never.is_empty() {
        writeln!(out, "every probe was hit")
    } else {
        writeln!(out, "never hit: {}", never.join(", "))
    }
}
