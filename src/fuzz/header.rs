//! The first line of a campaign's `results.jsonl`: which build ran it and every parameter that
//! decides a seed's result, so that `flinksim merge` can tell the shards of one campaign from
//! results that only look alike.
//!
//! ```json
//! {"type":"campaign","flinksim":"0.1.0","seeds":{"start":0,"end":60},"mode":"any","protocol":"any","bug":null,"unbiased":false,"recheck":0.0,"shrink":10,"shard":{"k":0,"n":3}}
//! ```
//!
//! A seed's line is a function of the seed, the build and these parameters
//! ([`super`]): `mode`, `protocol`, `bug` and `unbiased` are the generator's
//! [`GenerateOptions`], `recheck` decides which seeds run twice (their `rechecked`, and a
//! `determinism` violation), and `shrink` which violations get a reproducer. `seeds` and
//! `shard` say which seeds the file should hold, so a merge can name the missing ones.
//!
//! Not here, on purpose: the thread count and `--time-limit`. Neither changes any seed's line
//! (runs are single-threaded and merged in seed order; the limit only stops new seeds from
//! starting), and both are properties of the machine a shard ran on: shards on machines with
//! different core counts or deadlines are still one campaign. A time limit shows in the file as
//! seeds it lacks, which a merge reports. The git commit is not here either: it is not known to
//! a binary built outside a checkout, so the version is the build's identity.

use super::campaign::CampaignOptions;
use super::generate::GenerateOptions;
use super::strategy::Strategy;
use crate::scenario::Mode;
use serde_json::{json, Map, Value};
use std::ops::Range;

/// The flinksim version a header records.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A parsed `{"type":"campaign", …}` line.
#[derive(Clone, Debug, PartialEq)]
pub struct CampaignHeader {
    /// The version of the flinksim that wrote the file.
    pub version: String,
    /// Every field but `type`, `flinksim` and `shard`, in the line's order: what two shards of
    /// one campaign must agree on. Kept as JSON so that a parameter added later is compared
    /// without a change here.
    pub parameters: Map<String, Value>,
    /// The campaign's whole seed range (`parameters["seeds"]`).
    pub seeds: Range<u64>,
    /// `(k, n)`: the file holds the seeds ≡ k (mod n) of `seeds`; `None`: all of them.
    pub shard: Option<(u64, u64)>,
}

impl CampaignHeader {
    /// The header of a campaign run with `options` that shrinks at most `shrink` violations.
    pub fn new(options: &CampaignOptions, shrink: usize) -> CampaignHeader {
        let GenerateOptions {
            mode,
            protocol,
            bug,
            unbiased,
            swarm: _, // the strategy says it
        } = options.generate;
        let parameters = json!({
            "seeds": {"start": options.seeds.start, "end": options.seeds.end},
            "mode": match mode {
                Some(Mode::Streaming) => "streaming",
                Some(Mode::Batch) => "batch",
                None => "any",
            },
            "protocol": protocol.map_or("any", |p| p.name()),
            "bug": bug.map(|b| b.name()),
            "unbiased": unbiased,
            "recheck": options.recheck,
            "shrink": shrink,
        });
        let Value::Object(mut parameters) = parameters else {
            unreachable!("json! of an object")
        };
        // A random campaign's header has no strategy, as before strategies existed, so its
        // file stays byte for byte what it was; another strategy is a parameter like any.
        match options.strategy {
            Strategy::Random => {}
            Strategy::Pct { depth } => {
                parameters.insert("strategy".into(), "pct".into());
                parameters.insert("depth".into(), depth.into());
            }
            Strategy::Exhaustive => {
                unreachable!("an exhaustive exploration writes no campaign header")
            }
            Strategy::Guided => {
                parameters.insert("strategy".into(), "guided".into());
            }
            Strategy::Swarm => {
                parameters.insert("strategy".into(), "swarm".into());
            }
        }
        CampaignHeader {
            version: VERSION.to_owned(),
            parameters,
            seeds: options.seeds.clone(),
            shard: options.shard,
        }
    }

    /// The header line, as `results.jsonl` holds it.
    pub fn to_json(&self) -> Value {
        let mut line = Map::new();
        line.insert("type".into(), "campaign".into());
        line.insert("flinksim".into(), self.version.clone().into());
        line.extend(self.parameters.clone());
        line.insert(
            "shard".into(),
            self.shard
                .map_or(Value::Null, |(k, n)| json!({"k": k, "n": n})),
        );
        Value::Object(line)
    }

    /// Reads a header line; the error says what is wrong with it.
    pub fn parse(line: &Value) -> Result<CampaignHeader, String> {
        let Some(object) = line.as_object() else {
            return Err("the first line is not a JSON object".into());
        };
        if object.get("type").and_then(Value::as_str) != Some("campaign") {
            return Err(
                "the first line is not a campaign header ({\"type\":\"campaign\",…}); \
                 files written before headers existed cannot be merged: run the shard again"
                    .into(),
            );
        }
        let version = object
            .get("flinksim")
            .and_then(Value::as_str)
            .ok_or("the campaign header has no \"flinksim\" version")?
            .to_owned();
        let seeds = object
            .get("seeds")
            .ok_or("the campaign header has no \"seeds\"")?;
        let bound = |name: &str| {
            seeds
                .get(name)
                .and_then(Value::as_u64)
                .ok_or(format!("the header's \"seeds\" has no \"{name}\" number"))
        };
        let seeds = bound("start")?..bound("end")?;
        let shard = match object.get("shard") {
            None | Some(Value::Null) => None,
            Some(shard) => {
                let field = |name: &str| shard.get(name).and_then(Value::as_u64);
                match (field("k"), field("n")) {
                    (Some(k), Some(n)) if k < n => Some((k, n)),
                    _ => {
                        return Err(format!(
                            "the header's shard {shard} is not {{\"k\":K,\"n\":N}} with K < N"
                        ))
                    }
                }
            }
        };
        let parameters = object
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "type" | "flinksim" | "shard"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(CampaignHeader {
            version,
            parameters,
            seeds,
            shard,
        })
    }

    /// The first parameter (in this header's order, then the other's) on which the two
    /// disagree: its name, this header's value and the other's (`None`: absent).
    pub fn differing_parameter<'a>(
        &'a self,
        other: &'a CampaignHeader,
    ) -> Option<(&'a str, Option<&'a Value>, Option<&'a Value>)> {
        self.parameters
            .keys()
            .chain(other.parameters.keys())
            .map(|key| {
                (
                    key.as_str(),
                    self.parameters.get(key),
                    other.parameters.get(key),
                )
            })
            .find(|(_, mine, theirs)| mine != theirs)
    }

    /// The `fuzz` options that make a seed's scenario what it was, for reproduce lines:
    /// ` --mode batch --protocol flink --bug NAME`, each only when it is not the default.
    pub fn reproduce_flags(&self) -> String {
        let text = |key: &str| self.parameters.get(key).and_then(Value::as_str);
        let mut flags = String::new();
        for key in ["mode", "protocol"] {
            if let Some(value) = text(key).filter(|v| *v != "any") {
                flags.push_str(&format!(" --{key} {value}"));
            }
        }
        if let Some(bug) = text("bug") {
            flags.push_str(&format!(" --bug {bug}"));
        }
        if let Some(strategy) = text("strategy") {
            flags.push_str(&format!(" --strategy {strategy}"));
        }
        if let Some(depth) = self.parameters.get("depth").and_then(Value::as_u64) {
            flags.push_str(&format!(" --depth {depth}"));
        }
        flags
    }

    /// `mode …, protocol …[, injected bug …]`, as the first line of `fuzz` and `merge` says.
    pub fn describe(&self) -> String {
        let text = |key: &str| self.parameters.get(key).and_then(Value::as_str);
        let mode = match text("mode") {
            Some("any") => "any (one seed in five batch)",
            Some(mode) => mode,
            None => "?",
        };
        let bug = text("bug").map_or(String::new(), |b| format!(", injected bug {b}"));
        let strategy = match (text("strategy"), self.parameters.get("depth")) {
            (Some(strategy), Some(depth)) => format!(", strategy {strategy} depth {depth}"),
            (Some(strategy), None) => format!(", strategy {strategy}"),
            (None, _) => String::new(),
        };
        format!(
            "mode {mode}, protocol {}{bug}{strategy}",
            text("protocol").unwrap_or("?")
        )
    }

    /// The seeds of `seeds` in shard `shard` (all of them for `None`), in order.
    pub fn seeds_of(&self, shard: Option<(u64, u64)>) -> impl Iterator<Item = u64> {
        self.seeds
            .clone()
            .filter(move |s| shard.is_none_or(|(k, n)| s % n == k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bug::Bug;
    use crate::scenario::FinishProtocol;

    fn options(shard: Option<(u64, u64)>) -> CampaignOptions {
        CampaignOptions {
            seeds: 5..60,
            threads: 3,
            generate: GenerateOptions {
                mode: Some(Mode::Streaming),
                protocol: Some(FinishProtocol::Flink),
                bug: Some(Bug::EopNotAligned),
                unbiased: false,
                swarm: false,
            },
            shard,
            time_limit: None,
            recheck: 0.25,
            strategy: Strategy::Random,
        }
    }

    #[test]
    fn a_header_reads_back_as_written() {
        let header = CampaignHeader::new(&options(Some((1, 3))), 4);
        let line = header.to_json();
        assert_eq!(line["type"], "campaign");
        assert_eq!(line["shard"], json!({"k": 1, "n": 3}));
        let text = line.to_string();
        let back = CampaignHeader::parse(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, header);
        assert_eq!(back.to_json().to_string(), text);
        assert_eq!(
            back.reproduce_flags(),
            " --mode streaming --protocol flink --bug eop-not-aligned"
        );
        assert_eq!(
            back.seeds_of(back.shard).take(2).collect::<Vec<_>>(),
            [7, 10]
        );
    }

    /// A random campaign's header names no strategy (it is what it was before strategies);
    /// a PCT campaign's names it and its depth, so a merge refuses to mix the two, and its
    /// reproduce flags repeat them.
    #[test]
    fn a_pct_header_names_its_strategy_and_a_random_one_does_not() {
        let random = CampaignHeader::new(&options(None), 4);
        assert!(!random.parameters.contains_key("strategy"));
        let mut pct_options = options(None);
        pct_options.strategy = Strategy::Pct { depth: 2 };
        let pct = CampaignHeader::new(&pct_options, 4);
        assert_eq!(pct.parameters["strategy"], "pct");
        assert_eq!(pct.parameters["depth"], 2);
        assert_eq!(
            pct.reproduce_flags(),
            " --mode streaming --protocol flink --bug eop-not-aligned --strategy pct --depth 2"
        );
        assert!(pct.describe().ends_with(", strategy pct depth 2"));
        assert_eq!(
            random.differing_parameter(&pct).map(|d| d.0),
            Some("strategy")
        );
    }

    #[test]
    fn shards_differ_only_by_the_shard_and_threads_do_not_count() {
        let a = CampaignHeader::new(&options(Some((0, 3))), 4);
        let mut b_options = options(Some((2, 3)));
        b_options.threads = 1;
        b_options.time_limit = Some(std::time::Duration::from_secs(1));
        let b = CampaignHeader::new(&b_options, 4);
        assert_eq!(a.differing_parameter(&b), None);
        let mut c_options = options(None);
        c_options.recheck = 0.5;
        let c = CampaignHeader::new(&c_options, 4);
        let (name, mine, theirs) = a.differing_parameter(&c).unwrap();
        assert_eq!(
            (name, mine, theirs),
            ("recheck", Some(&json!(0.25)), Some(&json!(0.5)))
        );
    }

    #[test]
    fn a_seed_line_is_not_a_header() {
        let err = CampaignHeader::parse(&json!({"type": "seed", "seed": 0})).unwrap_err();
        assert!(err.contains("not a campaign header"), "{err}");
        let bad_shard = json!({"type": "campaign", "flinksim": "0.1.0",
            "seeds": {"start": 0, "end": 3}, "shard": {"k": 3, "n": 3}});
        assert!(CampaignHeader::parse(&bad_shard).is_err());
    }
}
