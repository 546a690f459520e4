//! Property: any valid job graph (a random DAG with random parallelism, edge patterns, record
//! counts, paces and latencies) runs to FINISHED with every record delivered exactly once to
//! the sinks, and runs the same way twice.

use flinksim::run::{run, RunOptions};
use flinksim::scenario;
use flinksim::status::JobStatus;
use flinksim::trace::Retain;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A random job graph as scenario JSON: sources first, then layers of maps / keyed sums, then
/// sinks. Every non-source vertex reads from at least one earlier vertex, so the graph is a DAG.
fn job() -> impl Strategy<Value = Value> {
    let vertex = (0u8..3, 1u32..5, 0u64..60, 1u64..400, 1u32..20);
    (
        1usize..3,
        prop::collection::vec(vertex, 1..5),
        1usize..3,
        any::<u64>(),
        1u32..6,
        prop::collection::vec((any::<bool>(), any::<bool>(), any::<u8>()), 24),
    )
        .prop_map(|(sources, middles, sinks, seed, capacity, choices)| {
            let mut vertices = Vec::new();
            let mut edges = Vec::new();
            let mut choice = choices.into_iter().cycle();
            let mut names: Vec<(String, bool)> = Vec::new(); // (id, is_sink)
            for s in 0..sources {
                let (_, p, records, pace, _) = middles[s % middles.len()];
                let id = format!("src{s}");
                vertices.push(json!({"id": id, "operator": "source", "parallelism": p,
                    "records": records, "record_interval": format!("{pace}us")}));
                names.push((id, false));
            }
            let n_sources = names.len();
            for (m, &(kind, p, _, cost, keys)) in middles.iter().enumerate() {
                let id = format!("v{m}");
                let operator = if kind == 0 { "keyed_sum" } else { "map" };
                let mut vertex = json!({"id": id, "operator": operator, "parallelism": p,
                    "process_time": format!("{cost}ns..{}us", cost)});
                if kind == 0 {
                    vertex["keys"] = json!(keys);
                }
                vertices.push(vertex);
                // One or two inputs among earlier vertices.
                let earlier = names.len();
                let (two, forward, pick) = choice.next().unwrap();
                let first = pick as usize % earlier;
                let mut inputs = vec![first];
                if two && earlier > 1 {
                    inputs.push((first + 1) % earlier);
                }
                for i in inputs {
                    let pattern = if kind == 0 || !forward { "all_to_all" } else { "forward" };
                    let mut edge = json!({"from": names[i].0, "to": id, "pattern": pattern});
                    if pattern == "all_to_all" && kind != 0 && pick % 2 == 1 {
                        edge["partitioner"] = json!("round_robin");
                    }
                    edges.push(edge);
                }
                names.push((id, false));
            }
            let producers: Vec<String> = names.iter().skip(n_sources.min(names.len() - 1)).map(|n| n.0.clone()).collect();
            for k in 0..sinks {
                let id = format!("sink{k}");
                let (_, forward, pick) = choice.next().unwrap();
                vertices.push(json!({"id": id, "operator": "sink", "parallelism": 1 + pick as u32 % 3}));
                let from = &producers[pick as usize % producers.len()];
                edges.push(json!({"from": from, "to": id, "pattern": if forward { "forward" } else { "all_to_all" }}));
            }
            json!({
                "name": "generated",
                "seed": seed,
                "mode": "streaming",
                "job": {"vertices": vertices, "edges": edges},
                "network": {"channel_latency": "10us..800us", "rpc_latency": "100us..3ms",
                            "channel_capacity": capacity},
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn every_valid_job_finishes_with_each_record_sunk_exactly_once(doc in job()) {
        let text = doc.to_string();
        let scenario = scenario::parse(&text, "generated").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let options = RunOptions { seed: None, retain: Retain::Nothing, eager_sources: false };
        let report = run(&scenario, &options);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{:?}", text, report.diagnosis);
        prop_assert!(report.violations.is_empty(), "{:?}\n{}", report.violations, text);
        let again = run(&scenario, &options);
        prop_assert_eq!(report.trace_hash, again.trace_hash);
    }
}
