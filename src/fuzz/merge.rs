//! `flinksim merge`: the shards of one campaign (`fuzz --shard K/N`, run on as many machines)
//! joined into the `results.jsonl` the unsharded campaign would have written.
//!
//! A seed's line does not depend on the shard that ran it ([`super`]), so the merge is the
//! shards' seed lines, verbatim, in seed order, under one header without a shard: for a
//! complete set of shards the file is byte for byte the unsharded run's. Everything that would
//! make that false is refused before anything is written: shards of different builds or
//! parameters ([`CampaignHeader`]), of different shard counts, one shard twice, a seed outside
//! its shard, one seed with two different results. What a merge cannot refuse, because it is
//! how a cluster fails, it reports: a shard that never ran, a shard cut short by
//! `--time-limit`, a seed listed twice.

use super::campaign::SeedResult;
use super::header::CampaignHeader;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a set of shards cannot be merged: one sentence naming the file (and line) at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError(pub String);

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}

/// One seed's line of a shard's file.
#[derive(Clone, Debug)]
pub struct SeedLine {
    /// 1-based, for messages.
    pub line: usize,
    /// The line as the shard wrote it, so the merge copies it byte for byte.
    pub text: String,
    pub result: SeedResult,
    /// Whether the line lists its coverage probes.
    pub has_probes: bool,
}

/// A shard's `results.jsonl`, read and checked line by line.
#[derive(Clone, Debug)]
pub struct ShardFile {
    pub path: PathBuf,
    pub header: CampaignHeader,
    pub lines: Vec<SeedLine>,
}

/// `DIR/results.jsonl` for a directory, the path itself for a file.
pub fn results_path(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join("results.jsonl")
    } else {
        input.to_path_buf()
    }
}

/// Reads a shard's results: a campaign header, then seed lines.
pub fn read_shard(path: &Path) -> Result<ShardFile, MergeError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| MergeError(format!("{shown}: {e}")))?;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let json = |n: usize, l: &str| {
        serde_json::from_str::<Value>(l)
            .map_err(|e| MergeError(format!("{shown}:{n}: not a JSON line: {e}")))
    };
    let (_, first) = lines
        .next()
        .ok_or_else(|| MergeError(format!("{shown}: empty; a campaign header was expected")))?;
    let header = CampaignHeader::parse(&json(1, first)?)
        .map_err(|e| MergeError(format!("{shown}:1: {e}")))?;
    let mut seeds = Vec::new();
    for (n, text) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let value = json(n, text)?;
        match value.get("type").and_then(Value::as_str) {
            Some("seed") => {}
            Some("campaign") => {
                return Err(MergeError(format!(
                    "{shown}:{n}: a second campaign header; merge files one campaign each"
                )))
            }
            other => {
                return Err(MergeError(format!(
                    "{shown}:{n}: a line of type {other:?}; only \"seed\" lines follow the header"
                )))
            }
        }
        let result =
            SeedResult::from_json(&value).map_err(|e| MergeError(format!("{shown}:{n}: {e}")))?;
        if !header.seeds.contains(&result.seed)
            || header.shard.is_some_and(|(k, m)| result.seed % m != k)
        {
            return Err(MergeError(format!(
                "{shown}:{n}: seed {} is not among the seeds {} this file's header promises",
                result.seed,
                describe_shard(&header),
            )));
        }
        seeds.push(SeedLine {
            line: n,
            text: text.trim_end().to_owned(),
            has_probes: value.get("probes").is_some(),
            result,
        });
    }
    Ok(ShardFile {
        path: path.to_path_buf(),
        header,
        lines: seeds,
    })
}

fn describe_shard(header: &CampaignHeader) -> String {
    let range = format!("{}..{}", header.seeds.start, header.seeds.end);
    match header.shard {
        Some((k, n)) => format!("{range} (shard {k}/{n})"),
        None => range,
    }
}

/// Seeds of one shard that the merge lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// `(k, n)`; `None` for an unsharded campaign.
    pub shard: Option<(u64, u64)>,
    /// No file of this shard was given.
    pub absent: bool,
    /// The seeds lacking, in order.
    pub seeds: Vec<u64>,
    /// How many seeds the shard has in all.
    pub of: u64,
}

/// A seed given more than once (with the same line each time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    pub seed: u64,
    /// Where it was seen: file and line, in input order.
    pub at: Vec<(PathBuf, usize)>,
}

/// The merged campaign.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The campaign's header: the shards' one without the shard.
    pub header: CampaignHeader,
    /// The shard count `N` (1 for an unsharded input).
    pub shards: u64,
    /// Every seed once, in seed order.
    pub lines: Vec<SeedLine>,
    /// Shards with seeds lacking, in shard order.
    pub missing: Vec<Missing>,
    pub duplicates: Vec<Duplicate>,
}

impl Merged {
    /// Whether every seed of the range is there exactly once.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.duplicates.is_empty()
    }

    /// The merged seeds' results, in seed order, for the campaign summary.
    pub fn results(&self) -> Vec<SeedResult> {
        self.lines.iter().map(|l| l.result.clone()).collect()
    }

    /// Whether the lines carry coverage probes (all of them do in this version).
    pub fn has_probes(&self) -> bool {
        self.lines.iter().any(|l| l.has_probes)
    }

    /// The merged `results.jsonl`: the header, then each seed's line as its shard wrote it.
    pub fn to_jsonl(&self) -> String {
        let mut text = self.header.to_json().to_string();
        text.push('\n');
        for line in &self.lines {
            text.push_str(&line.text);
            text.push('\n');
        }
        text
    }
}

/// Merges shard files (any order); refuses sets that are not shards of one campaign.
pub fn merge(files: &[ShardFile]) -> Result<Merged, MergeError> {
    let Some(first) = files.first() else {
        return Err(MergeError("no shards to merge".into()));
    };
    let shard_of = |f: &ShardFile| f.header.shard.unwrap_or((0, 1));
    let name = |f: &ShardFile| f.path.display().to_string();
    let (_, n) = shard_of(first);
    let mut by_shard: BTreeMap<u64, &ShardFile> = BTreeMap::new();
    for file in files {
        if file.header.version != first.header.version {
            return Err(MergeError(format!(
                "{} was written by flinksim {}, but {} by flinksim {}: merge only shards of one build",
                name(file),
                file.header.version,
                name(first),
                first.header.version
            )));
        }
        if let Some((key, theirs, mine)) = file.header.differing_parameter(&first.header) {
            let show = |v: Option<&Value>| v.map_or("absent".to_owned(), Value::to_string);
            return Err(MergeError(format!(
                "{} has campaign parameter {key} = {}, but {} has {}: not shards of one campaign",
                name(file),
                show(theirs),
                name(first),
                show(mine)
            )));
        }
        let (k, m) = shard_of(file);
        let show = |f: &ShardFile| match f.header.shard {
            Some((k, n)) => format!("shard {k}/{n}"),
            None => "unsharded".to_owned(),
        };
        if m != n {
            return Err(MergeError(format!(
                "{} is {}, but {} is {}: the shards of one campaign share N",
                name(file),
                show(file),
                name(first),
                show(first)
            )));
        }
        if let Some(other) = by_shard.insert(k, file) {
            return Err(MergeError(format!(
                "{} is {} again, as {} is: give each shard once",
                name(file),
                show(file),
                name(other)
            )));
        }
    }

    // Every seed once, in seed order; a seed seen twice must have one result.
    let mut seeds: BTreeMap<u64, (&ShardFile, &SeedLine)> = BTreeMap::new();
    let mut duplicates: BTreeMap<u64, Duplicate> = BTreeMap::new();
    for file in files {
        for line in &file.lines {
            let seed = line.result.seed;
            let Some(&(kept_file, kept)) = seeds.get(&seed) else {
                seeds.insert(seed, (file, line));
                continue;
            };
            if kept.text != line.text {
                return Err(MergeError(format!(
                    "{}:{}: seed {seed} again, with another result than at {}:{}: the runs \
                     disagree (a nondeterministic build, or two builds of one version)",
                    name(file),
                    line.line,
                    name(kept_file),
                    kept.line
                )));
            }
            duplicates
                .entry(seed)
                .or_insert_with(|| Duplicate {
                    seed,
                    at: vec![(kept_file.path.clone(), kept.line)],
                })
                .at
                .push((file.path.clone(), line.line));
        }
    }

    let header = CampaignHeader {
        shard: None,
        ..first.header.clone()
    };
    let missing = (0..n)
        .filter_map(|k| {
            let shard = (n > 1 || first.header.shard.is_some()).then_some((k, n));
            let expected: Vec<u64> = header.seeds_of(Some((k, n))).collect();
            let lacking: Vec<u64> = expected
                .iter()
                .copied()
                .filter(|s| !seeds.contains_key(s))
                .collect();
            (!lacking.is_empty()).then(|| Missing {
                shard,
                absent: !by_shard.contains_key(&k),
                of: expected.len() as u64,
                seeds: lacking,
            })
        })
        .collect();
    Ok(Merged {
        header,
        shards: n,
        lines: seeds.into_values().map(|(_, l)| l.clone()).collect(),
        missing,
        duplicates: duplicates.into_values().collect(),
    })
}

/// The shrunk reproducers of a shard directory: its `seed-*` files (scenarios and their
/// traces), by name.
pub fn reproducers(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("seed-") && path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}
