//! `flinksim compare`: one scenario under several designs, over the same seeds, as
//! distributions (issue 17, part 3).
//!
//! A single run shows one interleaving; a protocol designer asks how a choice behaves across
//! many. A *variant* is the scenario with some fields set (`--vary
//! checkpointing.finish_protocol=option1,option2`; several `--vary` multiply). Every variant
//! runs every seed; the figures of all runs of a variant are pooled and summarised by their
//! median, 90th percentile and maximum, so the variants can be read side by side. `--diff SEED`
//! shows where the first two variants' runs of one seed part.
//!
//! Everything here is read from the run reports and the protocol trace, after the runs: the
//! runs themselves are the ordinary ones, so a variant's run of seed `s` is exactly what
//! `flinksim run` prints for the varied file with `--seed s`.

use crate::report::event_line;
use crate::run::{run, RunOptions, RunReport};
use crate::scenario::{self, Scenario, ScenarioError};
use crate::trace::{Retain, TraceEvent};
use serde_json::Value;
use sim::Instant;
use std::fmt::Write as _;
use std::ops::Range;

/// One `--vary FIELD=V1,V2,…`: a JSON path into the scenario and the values to try there.
#[derive(Clone, Debug)]
pub struct Vary {
    pub field: String,
    pub values: Vec<Value>,
}

impl Vary {
    /// Parses `FIELD=V1,V2,…`. A value that reads as JSON (`4`, `true`, `"x"`, `{…}` without
    /// commas) is taken as such, anything else as a string.
    pub fn parse(text: &str) -> Result<Vary, String> {
        let (field, values) = text.split_once('=').ok_or_else(|| {
            format!("{text:?}: write FIELD=V1,V2,… (e.g. checkpointing.interval=5ms,10ms)")
        })?;
        if field.is_empty() || values.is_empty() {
            return Err(format!(
                "{text:?}: a field and at least one value are needed"
            ));
        }
        let values = values
            .split(',')
            .map(|v| serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned())))
            .collect();
        Ok(Vary {
            field: field.to_owned(),
            values,
        })
    }
}

/// One variant: its label (`field=value` per varied field) and its scenario.
pub struct Variant {
    pub label: String,
    pub scenario: Scenario,
}

/// Every combination of the `--vary` values, in the order given (the last field varies
/// fastest), each validated like a scenario file. `file` names the scenario in errors.
pub fn variants(text: &str, file: &str, varies: &[Vary]) -> Result<Vec<Variant>, ScenarioError> {
    let base: Value = serde_json::from_str(text).map_err(|e| ScenarioError {
        file: file.to_owned(),
        path: format!("{}:{}", e.line(), e.column()),
        message: e.to_string(),
    })?;
    let mut combos: Vec<Vec<(&str, &Value)>> = vec![Vec::new()];
    for vary in varies {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                vary.values.iter().map(move |v| {
                    let mut next = combo.clone();
                    next.push((vary.field.as_str(), v));
                    next
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|combo| {
            let mut doc = base.clone();
            let mut labels = Vec::new();
            for (field, value) in &combo {
                set(&mut doc, field, (*value).clone()).map_err(|message| ScenarioError {
                    file: file.to_owned(),
                    path: (*field).to_owned(),
                    message,
                })?;
                labels.push(format!("{field}={}", show(value)));
            }
            // One varied field: the value says it all (the header names the field).
            let label = match combo.as_slice() {
                [(_, value)] => show(value),
                _ => labels.join(" "),
            };
            let scenario = scenario::parse(&doc.to_string(), &format!("{file} ({label})"))?;
            Ok(Variant { label, scenario })
        })
        .collect()
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Sets `path` (`a.b[2].c`) in `doc` to `value`, creating missing objects on the way; an
/// array index must exist.
fn set(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut at = doc;
    let steps: Vec<&str> = path.split('.').collect();
    for (i, step) in steps.iter().enumerate() {
        let (name, index) = match step.split_once('[') {
            Some((name, rest)) => {
                let index = rest
                    .strip_suffix(']')
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(|| format!("{step:?}: expected name[index]"))?;
                (name, Some(index))
            }
            None => (*step, None),
        };
        let last = i + 1 == steps.len() && index.is_none();
        let object = at
            .as_object_mut()
            .ok_or_else(|| format!("{name:?} is inside something that is not an object"))?;
        if last {
            object.insert(name.to_owned(), value);
            return Ok(());
        }
        at = object
            .entry(name)
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(index) = index {
            let len = at.as_array().map_or(0, Vec::len);
            at = at
                .as_array_mut()
                .and_then(|a| a.get_mut(index))
                .ok_or_else(|| format!("{name}[{index}]: no such element ({len} there)"))?;
            if i + 1 == steps.len() {
                *at = value;
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A figure compared across variants.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Metric {
    CheckpointDuration,
    Alignment,
    RetriggerRpcs,
    FinalCommitLatency,
    RecordsReplayed,
    WorkRedone,
    RecoveryTime,
    JobEnd,
    Violations,
}

impl Metric {
    pub const ALL: [Metric; 9] = [
        Metric::CheckpointDuration,
        Metric::Alignment,
        Metric::RetriggerRpcs,
        Metric::FinalCommitLatency,
        Metric::RecordsReplayed,
        Metric::WorkRedone,
        Metric::RecoveryTime,
        Metric::JobEnd,
        Metric::Violations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::CheckpointDuration => "checkpoint duration, ms (each completed checkpoint)",
            Metric::Alignment => "alignment time, ms (each task and checkpoint)",
            Metric::RetriggerRpcs => "re-trigger RPCs (per run)",
            Metric::FinalCommitLatency => {
                "final-commit latency, ms (a two-phase-commit sink's end of input to all its output committed)"
            }
            Metric::RecordsReplayed => "records replayed (per run)",
            Metric::WorkRedone => "work redone, ms (batch recoveries, per run)",
            Metric::RecoveryTime => "recovery time, ms (each failover or batch recovery)",
            Metric::JobEnd => "job end, ms (runs that reached FINISHED)",
            Metric::Violations => "invariant violations (per run)",
        }
    }

    /// Whether the figure is a duration (printed in ms) rather than a count.
    fn is_time(self) -> bool {
        !matches!(
            self,
            Metric::RetriggerRpcs | Metric::RecordsReplayed | Metric::Violations
        )
    }
}

/// The samples of one variant: per metric, every figure (durations in ns), unsorted.
#[derive(Default, Clone, Debug)]
pub struct Samples {
    pub values: [Vec<u64>; Metric::ALL.len()],
    pub runs: u64,
    pub finished: u64,
}

impl Samples {
    fn push(&mut self, metric: Metric, value: u64) {
        self.values[metric as usize].push(value);
    }

    /// Pools `other`'s figures into these.
    fn merge(&mut self, other: Samples) {
        self.runs += other.runs;
        self.finished += other.finished;
        for (into, from) in self.values.iter_mut().zip(other.values) {
            into.extend(from);
        }
    }

    /// Adds one run's figures.
    pub fn add(&mut self, report: &RunReport) {
        use crate::checkpoint::stats::Outcome;
        self.runs += 1;
        for c in &report.checkpoints {
            if let Outcome::Completed(at) = c.outcome {
                self.push(Metric::CheckpointDuration, (at - c.triggered_at).as_nanos());
            }
            for (_, d) in &c.alignments {
                self.push(Metric::Alignment, d.as_nanos());
            }
        }
        self.push(Metric::RetriggerRpcs, report.retrigger_rpcs());
        // F1.5/P1.7: how long after a two-phase-commit sink's input ended all its output was
        // committed (visible): the time to the first commit after its end of input, or 0 when
        // everything was committed before (a run without violations has committed it all, so
        // no commit after the end means none was needed).
        let mut ended: std::collections::BTreeMap<_, Instant> = Default::default();
        let mut committed: std::collections::BTreeMap<_, Instant> = Default::default();
        for (_, at, event) in report.trace.kept() {
            match *event {
                TraceEvent::EndOfInput { subtask } => {
                    ended.insert(subtask, *at);
                }
                TraceEvent::TransactionCommitted { subtask, .. }
                    if ended.contains_key(&subtask) =>
                {
                    committed.entry(subtask).or_insert(*at);
                }
                _ => {}
            }
        }
        let two_phase = |s: crate::graph::SubtaskId| {
            let vertex = report.graph.subtasks[s.index()].vertex;
            report.graph.vertices[vertex.index()].chain.sink()
                == Some(crate::scenario::Delivery::TwoPhaseCommit)
        };
        for (&subtask, &end) in ended.iter().filter(|(&s, _)| two_phase(s)) {
            match committed.get(&subtask) {
                Some(&commit) => self.push(Metric::FinalCommitLatency, (commit - end).as_nanos()),
                None if report.violations.is_empty() => self.push(Metric::FinalCommitLatency, 0),
                None => {}
            }
        }
        let replayed = report.failovers.iter().map(|f| f.records_replayed).sum();
        self.push(Metric::RecordsReplayed, replayed);
        for f in &report.failovers {
            if let Some(restored) = f.restored_at {
                self.push(Metric::RecoveryTime, (restored - f.at).as_nanos());
            }
        }
        if let Some(batch) = &report.batch {
            self.push(Metric::WorkRedone, batch.redone().as_nanos());
            for r in &batch.recoveries {
                if let Some(running) = r.running_at {
                    self.push(Metric::RecoveryTime, (running - r.crashed_at).as_nanos());
                }
            }
        }
        if report.status == crate::status::JobStatus::Finished {
            self.finished += 1;
            self.push(Metric::JobEnd, report.sim_time.as_nanos());
        }
        self.push(Metric::Violations, report.violations.len() as u64);
    }
}

/// Median, 90th percentile and maximum (nearest rank), and the number of samples.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Spread {
    pub n: usize,
    pub p50: u64,
    pub p90: u64,
    pub max: u64,
}

pub fn spread(values: &[u64]) -> Option<Spread> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = |p: usize| sorted[(sorted.len() * p).div_ceil(100).max(1) - 1];
    (!sorted.is_empty()).then(|| Spread {
        n: sorted.len(),
        p50: rank(50),
        p90: rank(90),
        max: sorted[sorted.len() - 1],
    })
}

/// Runs every variant over `seeds`, on `threads` threads (the results do not depend on it:
/// each run's figures are pooled in variant and seed order). A run that panics ends the
/// comparison with the variant and seed, like any model bug.
pub fn measure(
    variants: &[Variant],
    seeds: Range<u64>,
    threads: usize,
) -> Result<Vec<Samples>, String> {
    let jobs: Vec<(usize, u64)> = (0..variants.len())
        .flat_map(|v| seeds.clone().map(move |s| (v, s)))
        .collect();
    let results = crate::fuzz::parallel_map(
        &jobs,
        threads,
        || true,
        |&(v, seed)| {
            let options = RunOptions {
                seed: Some(seed),
                retain: Retain::Protocol,
                eager_sources: false,
            };
            crate::fuzz::isolate::isolated(|| run(&variants[v].scenario, &options))
                .map(|report| {
                    let mut one = Samples::default();
                    one.add(&report);
                    one
                })
                .map_err(|panic| {
                    format!(
                        "variant {} seed {seed}: the model {panic}",
                        variants[v].label
                    )
                })
        },
    );
    let mut total = vec![Samples::default(); variants.len()];
    for (&(v, _), result) in jobs.iter().zip(results) {
        total[v].merge(result.expect("no run is refused: keep_going is always true")?);
    }
    Ok(total)
}

fn figure(metric: Metric, value: u64) -> String {
    if metric.is_time() {
        format!("{:.3}", value as f64 / 1e6)
    } else {
        value.to_string()
    }
}

/// The comparison as text: per metric, one row per variant.
pub fn table(variants: &[Variant], samples: &[Samples]) -> String {
    let width = variants
        .iter()
        .map(|v| v.label.len())
        .max()
        .unwrap_or(0)
        .max(7);
    let mut out = String::new();
    for (i, (v, s)) in variants.iter().zip(samples).enumerate() {
        let _ = writeln!(
            out,
            "variant {}  {}: {} runs, {} FINISHED",
            i + 1,
            v.label,
            s.runs,
            s.finished
        );
    }
    for metric in Metric::ALL {
        let _ = writeln!(out, "\n{}", metric.name());
        let _ = writeln!(
            out,
            "  {:<width$} {:>7} {:>12} {:>12} {:>12}",
            "variant", "n", "p50", "p90", "max"
        );
        for (v, s) in variants.iter().zip(samples) {
            match spread(&s.values[metric as usize]) {
                Some(sp) => {
                    let _ = writeln!(
                        out,
                        "  {:<width$} {:>7} {:>12} {:>12} {:>12}",
                        v.label,
                        sp.n,
                        figure(metric, sp.p50),
                        figure(metric, sp.p90),
                        figure(metric, sp.max)
                    );
                }
                None => {
                    let _ = writeln!(out, "  {:<width$} {:>7}", v.label, 0);
                }
            }
        }
    }
    out
}

/// A self-contained HTML page: per metric, a bar per variant to its median, a tick at its
/// 90th percentile and its maximum, on a scale shared by the variants.
pub fn html(title: &str, variants: &[Variant], samples: &[Samples]) -> String {
    const BAR: f64 = 520.0;
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut out = format!(
        "<!doctype html><meta charset=utf-8><title>{0}</title>\
         <style>body{{font:14px system-ui,sans-serif;margin:2em}}h2{{font-size:15px;margin:1.5em 0 .3em}}\
         text{{font:12px system-ui,sans-serif}}</style><h1>{0}</h1>\
         <p>Bars reach each variant's median; the thin mark is its 90th percentile, the \
         circle its maximum; n is the number of samples.</p>",
        escape(title)
    );
    // About 8 px per character of a 12 px label.
    let label_width = 8.0 * variants.iter().map(|v| v.label.len()).max().unwrap_or(8) as f64;
    for metric in Metric::ALL {
        let spreads: Vec<Option<Spread>> = samples
            .iter()
            .map(|s| spread(&s.values[metric as usize]))
            .collect();
        let top = spreads
            .iter()
            .flatten()
            .map(|s| s.max)
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let height = 24.0 * variants.len() as f64 + 8.0;
        let _ = write!(
            out,
            "<h2>{}</h2><svg width={} height={height}>",
            escape(metric.name()),
            label_width + BAR + 220.0
        );
        for (i, (v, sp)) in variants.iter().zip(&spreads).enumerate() {
            let y = 4.0 + 24.0 * i as f64;
            let _ = write!(out, "<text x=0 y={}>{}</text>", y + 15.0, escape(&v.label));
            let x0 = label_width;
            match sp {
                Some(sp) => {
                    let x = |value: u64| x0 + BAR * value as f64 / top;
                    let _ = write!(
                        out,
                        "<rect x={x0} y={y} width={:.1} height=18 fill=#6a9fd8></rect>\
                         <line x1={p90:.1} x2={p90:.1} y1={y} y2={} stroke=#203040 stroke-width=2></line>\
                         <circle cx={:.1} cy={} r=4 fill=none stroke=#c03030></circle>\
                         <text x={:.1} y={}>p50 {} · p90 {} · max {} (n {})</text>",
                        x(sp.p50) - x0,
                        y + 18.0,
                        x(sp.max),
                        y + 9.0,
                        x0 + BAR + 12.0,
                        y + 14.0,
                        figure(metric, sp.p50),
                        figure(metric, sp.p90),
                        figure(metric, sp.max),
                        sp.n,
                        p90 = x(sp.p90),
                    );
                }
                None => {
                    let _ = write!(out, "<text x={x0} y={}>no samples</text>", y + 15.0);
                }
            }
        }
        out.push_str("</svg>");
    }
    out.push('\n');
    out
}

/// Where two runs part: the first position at which `same` says their events differ, or, when
/// one is a prefix of the other, where the shorter ends; `None` when they are the same. One
/// definition for `compare --diff` (protocol events, compared by time and content),
/// `replay` (trace file lines) and `view --compare` (two trace files' protocol events).
pub fn first_divergence<A, B>(a: &[A], b: &[B], same: impl Fn(&A, &B) -> bool) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| !same(x, y))
        .or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// Where the runs of `seed` under the first two variants part: the first protocol event that
/// differs, with `context` events before it and after it on each side.
pub fn diff(variants: &[Variant], seed: u64, context: usize) -> Result<String, String> {
    let [a, b, ..] = variants else {
        return Err("--diff needs two variants or more (the first two are compared)".into());
    };
    let options = RunOptions {
        seed: Some(seed),
        retain: Retain::Protocol,
        eager_sources: false,
    };
    let runs = [a, b].map(|v| {
        crate::fuzz::isolate::isolated(|| run(&v.scenario, &options))
            .map_err(|panic| format!("variant {} seed {seed}: the model {panic}", v.label))
    });
    let [ra, rb] = runs;
    let (ra, rb) = (ra?, rb?);
    let (ea, eb) = (ra.trace.kept(), rb.trace.kept());
    let same =
        |x: &(u64, Instant, TraceEvent), y: &(u64, Instant, TraceEvent)| x.1 == y.1 && x.2 == y.2;
    let mut out = String::new();
    let Some(first) = first_divergence(ea, eb, same) else {
        let _ = writeln!(
            out,
            "seed {seed}: the two variants' protocol traces are the same ({} events)",
            ea.len()
        );
        return Ok(out);
    };
    let line = |report: &RunReport, (_, at, event): &(u64, Instant, TraceEvent)| {
        let (actor, text) = event_line(&report.graph, event);
        format!("{:>14}  {actor:<18} {text}", at.to_string())
    };
    let _ = writeln!(
        out,
        "seed {seed}: the protocol traces part at protocol event {} (of {} and {})",
        first + 1,
        ea.len(),
        eb.len()
    );
    let _ = writeln!(out, "\nthe same before:");
    for e in &ea[first.saturating_sub(context)..first] {
        let _ = writeln!(out, "{}", line(&ra, e));
    }
    for (v, report, events) in [(a, &ra, ea), (b, &rb, eb)] {
        let _ = writeln!(out, "\n{}:", v.label);
        for e in events.iter().skip(first).take(context) {
            let _ = writeln!(out, "{}", line(report, e));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_creates_objects_and_indexes_arrays() {
        let mut doc: Value = serde_json::json!({"job": {"vertices": [{"id": "a"}, {"id": "b"}]}});
        set(&mut doc, "job.vertices[1].parallelism", 4.into()).unwrap();
        set(&mut doc, "checkpointing.interval", "5ms".into()).unwrap();
        assert_eq!(doc["job"]["vertices"][1]["parallelism"], 4);
        assert_eq!(doc["checkpointing"]["interval"], "5ms");
        // A path may end at an array element: the element is replaced.
        set(&mut doc, "job.vertices[0]", serde_json::json!({"id": "z"})).unwrap();
        assert_eq!(doc["job"]["vertices"][0], serde_json::json!({"id": "z"}));
        assert_eq!(doc["job"]["vertices"][1]["id"], "b");
        let err = set(&mut doc, "job.vertices[5].parallelism", 1.into()).unwrap_err();
        assert!(err.contains("no such element (2 there)"), "{err}");
        assert!(set(&mut doc, "job.vertices[1].id.x", 1.into()).is_err());
    }

    #[test]
    fn vary_reads_json_values_and_falls_back_to_strings() {
        let vary = Vary::parse("a.b=1,true,option1,\"x\"").unwrap();
        assert_eq!(vary.field, "a.b");
        assert_eq!(
            vary.values,
            [
                Value::from(1),
                Value::from(true),
                "option1".into(),
                "x".into()
            ]
        );
        assert!(Vary::parse("a.b").is_err());
        assert!(Vary::parse("=1").is_err());
    }

    /// The chart's geometry: on a scale shared by the variants (the largest maximum), a bar to
    /// the median, a mark at the 90th percentile and a circle at the maximum.
    #[test]
    fn the_chart_draws_each_variant_on_a_shared_scale() {
        let text = include_str!("../scenarios/compare-finish-protocols.json");
        let vary = Vary::parse("checkpointing.finish_protocol=option1,option2").unwrap();
        let variants = variants(text, "f.json", &[vary]).unwrap();
        let mut samples = vec![Samples::default(), Samples::default()];
        let slot = Metric::CheckpointDuration as usize;
        samples[0].values[slot] = vec![2_000_000, 1_000_000];
        samples[1].values[slot] = vec![4_000_000];
        let page = html("t", &variants, &samples);
        let section = page
            .split("<h2>")
            .find(|s| s.starts_with("checkpoint duration"))
            .unwrap();
        for wanted in [
            "<svg width=796 height=56>",
            "<text x=0 y=19>option1</text>",
            "<rect x=56 y=4 width=130.0 height=18",
            "<line x1=316.0 x2=316.0 y1=4 y2=22",
            "<circle cx=316.0 cy=13 r=4",
            "<text x=588.0 y=18>p50 1.000 · p90 2.000 · max 2.000 (n 2)</text>",
            "<text x=0 y=43>option2</text>",
            "<rect x=56 y=28 width=520.0 height=18",
            "<line x1=576.0 x2=576.0 y1=28 y2=46",
            "<circle cx=576.0 cy=37 r=4",
            "<text x=588.0 y=42>p50 4.000 · p90 4.000 · max 4.000 (n 1)</text>",
        ] {
            assert!(section.contains(wanted), "{wanted} not in {section}");
        }
        let empty = page
            .split("<h2>")
            .find(|s| s.starts_with("alignment"))
            .unwrap();
        assert!(
            empty.contains("<text x=56 y=19>no samples</text>"),
            "{empty}"
        );
        assert!(
            empty.contains("<text x=56 y=43>no samples</text>"),
            "{empty}"
        );
    }

    #[test]
    fn spread_is_nearest_rank() {
        let values: Vec<u64> = (1..=10).collect();
        assert_eq!(
            spread(&values),
            Some(Spread {
                n: 10,
                p50: 5,
                p90: 9,
                max: 10
            })
        );
        assert_eq!(spread(&[7]).map(|s| (s.p50, s.p90, s.max)), Some((7, 7, 7)));
        assert_eq!(spread(&[]), None);
    }
}
