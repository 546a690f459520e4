//! What the property tests share: a generator of small random job graphs and the helpers that
//! run a generated scenario document and describe a failing run.

use flinksim::run::{run, RunOptions, RunReport};
use flinksim::scenario;
use flinksim::trace::Retain;
use proptest::prelude::*;
use serde_json::{json, Value};

/// One source vertex: parallelism, records per subtask (one entry per possible subtask), pace
/// range in µs.
pub type SourceSpec = (u32, Vec<u64>, (u64, u64));
/// One middle vertex: kind (0: keyed_sum), parallelism, process time in ns, keys, input choice.
pub type MiddleSpec = (u8, u32, u64, u32, (bool, bool, u8));
/// One sink: parallelism, two-phase-commit, forward, pick.
pub type SinkSpec = (u32, bool, bool, u8);

/// Parallelism below `max_parallelism`; per subtask often short, sometimes empty, sometimes up
/// to `max_records` long, so subtasks of one vertex finish at very different times.
pub fn source(max_parallelism: u32, max_records: u64) -> impl Strategy<Value = SourceSpec> {
    (
        1u32..max_parallelism,
        prop::collection::vec(
            prop_oneof![2 => 0u64..20, 1 => Just(0u64), 3 => 0u64..max_records + 1],
            max_parallelism as usize - 1,
        ),
        (1u64..50, 0u64..250),
    )
}

pub fn middle(max_parallelism: u32) -> impl Strategy<Value = MiddleSpec> {
    (
        0u8..3,
        1u32..max_parallelism,
        1u64..300_000,
        1u32..20,
        (any::<bool>(), any::<bool>(), any::<u8>()),
    )
}

pub fn sink(max_parallelism: u32) -> impl Strategy<Value = SinkSpec> {
    (
        1u32..max_parallelism,
        any::<bool>(),
        any::<bool>(),
        any::<u8>(),
    )
}

/// The graph: sources, then layers of maps / keyed sums, then sinks; 2 to 8 vertices.
pub fn graph(
    sources: &[SourceSpec],
    middles: &[MiddleSpec],
    sinks: &[SinkSpec],
    two_phase_commit_allowed: bool,
) -> (Vec<Value>, Vec<Value>) {
    let mut vertices = Vec::new();
    let mut edges = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (s, (p, records, (pace_lo, pace_extra))) in sources.iter().enumerate() {
        let id = format!("src{s}");
        let records: Vec<u64> = records[..*p as usize].to_vec();
        vertices.push(json!({"id": id, "operator": "source", "parallelism": p,
            "records": records,
            "record_interval": format!("{pace_lo}us..{}us", pace_lo + pace_extra)}));
        names.push(id);
    }
    let n_sources = names.len();
    for (m, &(kind, p, cost, keys, (two, forward, pick))) in middles.iter().enumerate() {
        let id = format!("v{m}");
        let operator = if kind == 0 { "keyed_sum" } else { "map" };
        let mut vertex = json!({"id": id, "operator": operator, "parallelism": p,
            "process_time": format!("{}ns..{}ns", cost / 4, cost)});
        if kind == 0 {
            vertex["keys"] = json!(keys);
        }
        vertices.push(vertex);
        let earlier = names.len();
        let first = pick as usize % earlier;
        let mut inputs = vec![first];
        if two && earlier > 1 {
            inputs.push((first + 1) % earlier);
        }
        for i in inputs {
            let pattern = if kind == 0 || !forward {
                "all_to_all"
            } else {
                "forward"
            };
            let mut edge = json!({"from": names[i], "to": id, "pattern": pattern});
            if pattern == "all_to_all" && kind != 0 && pick % 2 == 1 {
                edge["partitioner"] = json!("round_robin");
            }
            edges.push(edge);
        }
        names.push(id);
    }
    // Sinks read from a middle vertex when there is one, from a source otherwise.
    let producers: Vec<String> = if names.len() > n_sources {
        names[n_sources..].to_vec()
    } else {
        names.clone()
    };
    for (k, &(p, tpc, forward, pick)) in sinks.iter().enumerate() {
        let id = format!("sink{k}");
        let delivery = if tpc && two_phase_commit_allowed {
            "two_phase_commit"
        } else {
            "at_least_once"
        };
        vertices
            .push(json!({"id": id, "operator": "sink", "parallelism": p, "delivery": delivery}));
        let from = &producers[pick as usize % producers.len()];
        edges.push(json!({"from": from, "to": id,
            "pattern": if forward { "forward" } else { "all_to_all" }}));
    }
    (vertices, edges)
}

pub fn run_doc(text: &str) -> RunReport {
    let scenario = scenario::parse(text, "generated").unwrap_or_else(|e| panic!("{e}\n{text}"));
    run(
        &scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        },
    )
}

pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

pub fn describe(report: &RunReport) -> String {
    let violations: Vec<String> = report
        .violations
        .iter()
        .map(|v| {
            format!(
                "{} at {} {:?}: {}",
                v.invariant.id(),
                v.time,
                v.actors,
                v.message
            )
        })
        .collect();
    format!(
        "status {}, stop {:?}, violations {violations:#?}, diagnosis {:#?}",
        report.status, report.stop, report.diagnosis
    )
}
