//! Data-driven tests of the loader: a document in, the expected scenario or the expected error
//! (its JSON path and a key phrase of its message) out.

use super::*;
use crate::oracle::invariant::Invariant;
use crate::status::JobStatus;
use sim::Duration;

/// The example of the module doc, with every section written out.
const FULL: &str = r#"{
  "name": "keyed-sum",
  "description": "Two sources feed a keyed sum that feeds one sink.",
  "seed": 7,
  "mode": "streaming",
  "job": {
    "vertices": [
      {"id": "src",  "operator": "source", "parallelism": 2, "records": [100, 400], "record_interval": "1ms"},
      {"id": "sum",  "operator": "keyed_sum", "parallelism": 2, "keys": 16, "process_time": "20us..200us"},
      {"id": "sink", "operator": "sink", "parallelism": 1}
    ],
    "edges": [
      {"from": "src", "to": "sum", "pattern": "all_to_all"},
      {"from": "sum", "to": "sink", "pattern": "all_to_all", "partitioner": "round_robin"}
    ]
  },
  "cluster": {"task_managers": 2, "slots_per_task_manager": 1},
  "network": {"channel_latency": "50us..500us", "rpc_latency": "200us..2ms", "channel_capacity": 8},
  "budget": {"max_events": 5000000, "max_time": "60s"},
  "tie_break": "insertion",
  "expect": {"status": "FINISHED", "violations": [], "sink_records": 500, "sinks": {"sink": 500}}
}"#;

/// A streaming scenario around the given `job` object, everything else defaulted.
fn with_job(job: &str) -> String {
    format!(r#"{{"name": "t", "mode": "streaming", "job": {job}}}"#)
}

/// A streaming scenario with the job `src` (source, parallelism 2) -> `sink` (parallelism 1) and
/// the given extra top-level fields (`""` for none).
fn with(extra: &str) -> String {
    let comma = if extra.is_empty() { "" } else { "," };
    format!(
        r#"{{"name": "t", "mode": "streaming", "job": {{
            "vertices": [
                {{"id": "src", "operator": "source", "parallelism": 2}},
                {{"id": "sink", "operator": "sink", "parallelism": 1}}
            ],
            "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]
        }}{comma} {extra}}}"#
    )
}

/// A job of the given vertices and edges (JSON list bodies).
fn graph(vertices: &str, edges: &str) -> String {
    with_job(&format!(
        r#"{{"vertices": [{vertices}], "edges": [{edges}]}}"#
    ))
}

fn ok(text: &str) -> Scenario {
    parse(text, "t.json").unwrap_or_else(|e| panic!("{e}\nin {text}"))
}

/// Asserts that `text` is refused at `path` with a message containing `phrase`.
#[track_caller]
fn reject(text: &str, path: &str, phrase: &str) {
    let e = parse(text, "t.json").expect_err(text);
    assert_eq!(e.file, "t.json");
    assert_eq!(e.path, path, "wrong path for {e}");
    assert!(e.message.contains(phrase), "{e:?} does not say {phrase:?}");
}

fn fixed_us(us: u64) -> DurationRange {
    DurationRange::fixed(Duration::from_micros(us))
}

fn range(min: Duration, max: Duration) -> DurationRange {
    DurationRange { min, max }
}

#[test]
fn full_example_reads_into_the_expected_values() {
    let s = ok(FULL);
    assert_eq!(s.name, "keyed-sum");
    assert_eq!(
        s.description,
        "Two sources feed a keyed sum that feeds one sink."
    );
    assert_eq!(s.seed, 7);
    assert_eq!(s.mode, Mode::Streaming);
    let expected_job = Job {
        vertices: vec![
            Vertex {
                id: "src".into(),
                parallelism: 2,
                operator: Operator::Source {
                    records: vec![Records::Bounded(100), Records::Bounded(400)],
                    record_interval: DurationRange::fixed(Duration::from_millis(1)),
                },
                process_time: fixed_us(10),
            },
            Vertex {
                id: "sum".into(),
                parallelism: 2,
                operator: Operator::KeyedSum { keys: 16 },
                process_time: range(Duration::from_micros(20), Duration::from_micros(200)),
            },
            Vertex {
                id: "sink".into(),
                parallelism: 1,
                operator: Operator::Sink {
                    delivery: Delivery::AtLeastOnce,
                },
                process_time: fixed_us(10),
            },
        ],
        edges: vec![
            Edge {
                from: 0,
                to: 1,
                pattern: Pattern::AllToAll,
                exchange: Exchange::Pipelined,
                partitioner: Partitioner::KeyHash,
            },
            Edge {
                from: 1,
                to: 2,
                pattern: Pattern::AllToAll,
                exchange: Exchange::Pipelined,
                partitioner: Partitioner::RoundRobin,
            },
        ],
    };
    assert_eq!(s.job, expected_job);
    assert_eq!(
        s.cluster,
        Cluster {
            task_managers: 2,
            slots_per_task_manager: 1
        }
    );
    assert_eq!(
        s.network,
        Network {
            channel_latency: range(Duration::from_micros(50), Duration::from_micros(500)),
            rpc_latency: range(Duration::from_micros(200), Duration::from_millis(2)),
            channel_capacity: 8,
        }
    );
    assert_eq!(
        s.budget,
        Budget {
            max_events: 5_000_000,
            max_time: Duration::from_secs(60)
        }
    );
    assert_eq!(s.tie_break, TieBreak::Insertion);
    assert_eq!(
        s.expect,
        Expect {
            status: Some(JobStatus::Finished),
            violations: vec![],
            sink_records: Some(500),
            sinks: [("sink".to_owned(), 500)].into_iter().collect(),
            trace_hash: None,
        }
    );
    let document: serde_json::Value = serde_json::from_str(FULL).unwrap();
    assert_eq!(s.document, document);
}

#[test]
fn every_field_but_name_mode_and_job_has_a_default() {
    let s = ok(&with_job(
        r#"{"vertices": [{"id": "src", "operator": "source", "parallelism": 3}]}"#,
    ));
    assert_eq!(s.description, "");
    assert_eq!(s.seed, 0);
    assert_eq!(s.tie_break, TieBreak::Insertion);
    assert_eq!(s.job.vertices[0].process_time, fixed_us(10));
    assert_eq!(
        s.job.vertices[0].operator,
        Operator::Source {
            records: vec![Records::Bounded(100); 3],
            record_interval: fixed_us(100),
        }
    );
    assert!(s.job.edges.is_empty());
    // 3 slots needed over 2 TaskManagers: 2 each.
    assert_eq!(
        s.cluster,
        Cluster {
            task_managers: 2,
            slots_per_task_manager: 2
        }
    );
    assert_eq!(
        s.network,
        Network {
            channel_latency: range(Duration::from_micros(50), Duration::from_micros(500)),
            rpc_latency: range(Duration::from_micros(200), Duration::from_millis(2)),
            channel_capacity: 8,
        }
    );
    assert_eq!(
        s.budget,
        Budget {
            max_events: 10_000_000,
            max_time: Duration::from_secs(3600)
        }
    );
    assert_eq!(s.expect, Expect::default());
}

#[test]
fn operator_specific_defaults() {
    let s = ok(&graph(
        r#"{"id": "src", "operator": "source", "parallelism": 1},
           {"id": "sum", "operator": "keyed_sum", "parallelism": 1},
           {"id": "out", "operator": "sink", "parallelism": 1}"#,
        r#"{"from": "src", "to": "sum", "pattern": "all_to_all"},
           {"from": "sum", "to": "out", "pattern": "forward"}"#,
    ));
    assert_eq!(s.job.vertices[1].operator, Operator::KeyedSum { keys: 16 });
    assert_eq!(
        s.job.vertices[2].operator,
        Operator::Sink {
            delivery: Delivery::AtLeastOnce
        }
    );
    assert_eq!(s.job.edges[1].pattern, Pattern::Forward);
    assert_eq!(s.job.edges[1].exchange, Exchange::Pipelined);
}

#[test]
fn records_take_one_value_for_all_subtasks_or_one_per_subtask() {
    let records = |value: &str| {
        let s = ok(&with_job(&format!(
            r#"{{"vertices": [{{"id": "s", "operator": "source", "parallelism": 3, "records": {value}}}]}}"#
        )));
        match &s.job.vertices[0].operator {
            Operator::Source { records, .. } => records.clone(),
            other => panic!("not a source: {other:?}"),
        }
    };
    assert_eq!(records("7"), vec![Records::Bounded(7); 3]);
    assert_eq!(records("0"), vec![Records::Bounded(0); 3]);
    assert_eq!(records(r#""unbounded""#), vec![Records::Unbounded; 3]);
    assert_eq!(
        records(r#"[1, "unbounded", 3]"#),
        vec![Records::Bounded(1), Records::Unbounded, Records::Bounded(3)]
    );
}

#[test]
fn expectations_read_flink_names_invariant_ids_and_hex_hashes() {
    let s = ok(&with(
        r#""expect": {"status": "RUNNING", "violations": ["consistent-cut", "job-terminates"],
                      "sinks": {"sink": 3}, "trace_hash": "0x00C0ffee0000002a"}"#,
    ));
    assert_eq!(s.expect.status, Some(JobStatus::Running));
    assert_eq!(
        s.expect.violations,
        vec![Invariant::ConsistentCut, Invariant::JobTerminates]
    );
    assert_eq!(s.expect.sinks.get("sink"), Some(&3));
    assert_eq!(s.expect.sink_records, None);
    assert_eq!(s.expect.trace_hash, Some(0x00c0_ffee_0000_002a));
}

#[test]
fn ranges_and_fixed_durations_print_as_they_are_written() {
    let s = ok(&with(
        r#""network": {"channel_latency": "1.5ms", "rpc_latency": "0..2s"}, "tie_break": "shuffled""#,
    ));
    assert_eq!(
        s.network.channel_latency,
        DurationRange::fixed(Duration::from_micros(1_500))
    );
    assert_eq!(s.network.channel_latency.to_string(), "1.5ms");
    assert_eq!(
        s.network.rpc_latency,
        range(Duration::ZERO, Duration::from_secs(2))
    );
    assert_eq!(s.network.rpc_latency.to_string(), "0ns..2s");
    assert_eq!(s.tie_break, TieBreak::Shuffled);
}

/// What is valid but not implemented yet still reads into the values it will have once it is.
#[test]
fn unsupported_features_read_correctly_before_they_are_refused() {
    let batch = r#"{"name": "t", "mode": "batch", "job": {
        "vertices": [{"id": "src", "operator": "source", "parallelism": 1},
                     {"id": "out", "operator": "sink", "parallelism": 1, "delivery": "two_phase_commit"}],
        "edges": [{"from": "src", "to": "out", "pattern": "forward"}]}}"#;
    let s = parse_valid(batch, "t.json").expect("valid apart from what is unsupported");
    assert_eq!(s.mode, Mode::Batch);
    assert_eq!(s.job.edges[0].exchange, Exchange::Blocking);
    assert_eq!(
        s.job.vertices[1].operator,
        Operator::Sink {
            delivery: Delivery::TwoPhaseCommit
        }
    );
}

#[test]
fn error_display_names_file_path_and_message() {
    let e = ScenarioError {
        file: "a.json".into(),
        path: "job.vertices[2].parallelism".into(),
        message: "must be at least 1".into(),
    };
    assert_eq!(
        e.to_string(),
        "a.json: at job.vertices[2].parallelism: must be at least 1"
    );
}

#[test]
fn load_reads_the_file_and_reports_io_errors_as_scenario_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, FULL).unwrap();
    assert_eq!(load(&path).unwrap().name, "keyed-sum");
    let missing = dir.path().join("missing.json");
    let e = load(&missing).unwrap_err();
    assert_eq!(e.file, missing.display().to_string());
    assert_eq!(e.path, "$");
    assert!(e.message.contains("cannot read the file"), "{e}");
}

#[test]
fn rejects_what_is_not_json_at_its_line_and_column() {
    reject("", "1:0", "invalid JSON");
    reject("{\n  \"name\": \"t\",\n}", "3:1", "trailing comma");
    reject(r#"{"name": "t"} x"#, "1:15", "trailing characters");
}

#[test]
fn rejects_wrong_shapes_at_their_path() {
    reject("[1]", "$", "expected a JSON object");
    reject(r#"{"mode": "streaming"}"#, "$", "missing field `name`");
    reject(
        r#"{"name": "t", "name": "u"}"#,
        "$",
        "duplicate field `name`",
    );
    reject(&with(r#""sead": 1"#), "sead", "unknown field `sead`");
    reject(
        &with(r#""mode": "streaming""#),
        "$",
        "duplicate field `mode`",
    );
    reject(&with(r#""seed": -1"#), "seed", "expected u64");
    reject(
        &with(r#""cluster": [2, 4]"#),
        "cluster",
        "expected a JSON object",
    );
    reject(
        &with(r#""network": {"latency": "1ms"}"#),
        "network.latency",
        "unknown field `latency`",
    );
    reject(
        &with(r#""tie_break": "random""#),
        "tie_break",
        "unknown variant `random`",
    );
    reject(
        &with_job(r#"{"vertices": [["src", "source", 1]]}"#),
        "job.vertices[0]",
        "expected a JSON object",
    );
    reject(
        &with_job(r#"{"vertices": [{"id": "s", "parallelism": 1}]}"#),
        "job.vertices[0]",
        "missing field `operator`",
    );
    reject(
        &graph(r#"{"id": "s", "operator": "sauce", "parallelism": 1}"#, ""),
        "job.vertices[0].operator",
        "unknown variant `sauce`",
    );
    reject(
        &graph(
            r#"{"id": "s", "operator": "source", "parallelism": 1, "recrods": 5}"#,
            "",
        ),
        "job.vertices[0].recrods",
        "unknown field `recrods`",
    );
    reject(
        &graph(
            r#"{"id": "s", "operator": "source", "parallelism": 1},
               {"id": "k", "operator": "sink", "parallelism": 1}"#,
            r#"{"from": "s", "to": "k"}"#,
        ),
        "job.edges[0]",
        "missing field `pattern`",
    );
}

#[test]
fn rejects_bad_durations_quoting_them_and_saying_what_was_expected() {
    let expected =
        r#"expected a duration like "250us", "10ms" or "2s", or a range like "1ms..5ms""#;
    let process_time = |value: &str| {
        graph(
            &format!(
                r#"{{"id": "s", "operator": "source", "parallelism": 1, "process_time": {value}}}"#
            ),
            "",
        )
    };
    let at = "job.vertices[0].process_time";
    reject(
        &process_time(r#""10 lightyears""#),
        at,
        "\"10 lightyears\" is not a duration",
    );
    reject(&process_time(r#""10 lightyears""#), at, expected);
    reject(&process_time(r#""10""#), at, "a unit is missing");
    reject(&process_time("10"), at, "invalid type: integer `10`");
    reject(
        &process_time(r#""5ms..1ms""#),
        at,
        "its minimum 5ms is above its maximum 1ms",
    );
    reject(
        &process_time(r#""1ms..2""#),
        at,
        "\"1ms..2\" is not a range",
    );
    reject(
        &with(r#""network": {"rpc_latency": "1us...2ms"}"#),
        "network.rpc_latency",
        "write it with two dots",
    );
    reject(
        &with(r#""budget": {"max_time": "1ms..2ms"}"#),
        "budget.max_time",
        "this field takes one duration",
    );
    reject(
        &with(r#""budget": {"max_time": "1h"}"#),
        "budget.max_time",
        r#"expected a duration like "250us", "10ms" or "2s""#,
    );
}

#[test]
fn rejects_bad_vertices() {
    let one = |vertex: &str| graph(vertex, "");
    reject(
        &one(r#"{"id": "", "operator": "source", "parallelism": 1}"#),
        "job.vertices[0].id",
        "must not be empty",
    );
    reject(
        &one(r#"{"id": "s", "operator": "source", "parallelism": 0}"#),
        "job.vertices[0].parallelism",
        "between 1 and 100000",
    );
    reject(
        &one(r#"{"id": "s", "operator": "source", "parallelism": 100001}"#),
        "job.vertices[0].parallelism",
        "between 1 and 100000",
    );
    reject(
        &one(r#"{"id": "s", "operator": "source", "parallelism": 2, "records": [1, 2, 3]}"#),
        "job.vertices[0].records",
        "lists 3 record counts but the vertex has parallelism 2",
    );
    reject(
        &one(r#"{"id": "s", "operator": "source", "parallelism": 2, "records": [1, -2]}"#),
        "job.vertices[0].records[1]",
        r#"expected a record count or "unbounded""#,
    );
    reject(
        &one(r#"{"id": "s", "operator": "source", "parallelism": 2, "records": "endless"}"#),
        "job.vertices[0].records",
        r#""endless" is not a record count"#,
    );
    reject(
        &with_job(r#"{"vertices": []}"#),
        "job.vertices",
        "at least one vertex",
    );
    reject(
        &graph(
            r#"{"id": "a", "operator": "source", "parallelism": 1},
               {"id": "b", "operator": "source", "parallelism": 1},
               {"id": "a", "operator": "source", "parallelism": 1}"#,
            "",
        ),
        "job.vertices[2].id",
        r#"vertex id "a" is already used by job.vertices[0]"#,
    );
}

#[test]
fn rejects_operator_fields_on_other_operators() {
    let cases = [
        (
            r#""operator": "map", "records": 5"#,
            "records",
            "`records` only applies to source vertices",
        ),
        (
            r#""operator": "sink", "record_interval": "1ms""#,
            "record_interval",
            "`record_interval` only applies to source vertices",
        ),
        (
            r#""operator": "map", "keys": 4"#,
            "keys",
            "`keys` only applies to keyed_sum vertices",
        ),
        (
            r#""operator": "keyed_sum", "delivery": "at_least_once""#,
            "delivery",
            "`delivery` only applies to sink vertices",
        ),
    ];
    for (fields, field, phrase) in cases {
        let text = graph(
            &format!(
                r#"{{"id": "s", "operator": "source", "parallelism": 1}},
                   {{"id": "x", "parallelism": 1, {fields}}}"#
            ),
            r#"{"from": "s", "to": "x", "pattern": "all_to_all"}"#,
        );
        reject(&text, &format!("job.vertices[1].{field}"), phrase);
    }
    reject(
        &graph(
            r#"{"id": "s", "operator": "source", "parallelism": 1},
               {"id": "k", "operator": "keyed_sum", "parallelism": 1, "keys": 0}"#,
            r#"{"from": "s", "to": "k", "pattern": "all_to_all"}"#,
        ),
        "job.vertices[1].keys",
        "must be at least 1",
    );
}

/// src(2), map(2), sum(2), sink(1), then the edges given.
fn edges(edges: &str) -> String {
    graph(
        r#"{"id": "src", "operator": "source", "parallelism": 2},
           {"id": "map", "operator": "map", "parallelism": 2},
           {"id": "sum", "operator": "keyed_sum", "parallelism": 2},
           {"id": "sink", "operator": "sink", "parallelism": 1}"#,
        edges,
    )
}

#[test]
fn rejects_bad_edges() {
    reject(
        &edges(r#"{"from": "src", "to": "nope", "pattern": "forward"}"#),
        "job.edges[0].to",
        r#"unknown vertex "nope"; the vertices are "src", "map", "sum", "sink""#,
    );
    reject(
        &edges(r#"{"from": "nope", "to": "map", "pattern": "forward"}"#),
        "job.edges[0].from",
        r#"unknown vertex "nope""#,
    );
    reject(
        &edges(r#"{"from": "map", "to": "map", "pattern": "forward"}"#),
        "job.edges[0].to",
        "to itself is a cycle",
    );
    reject(
        &edges(
            r#"{"from": "src", "to": "map", "pattern": "forward"},
               {"from": "src", "to": "map", "pattern": "all_to_all"}"#,
        ),
        "job.edges[1]",
        r#"duplicate edge "src" -> "map": job.edges[0] already connects them"#,
    );
    reject(
        &edges(r#"{"from": "map", "to": "src", "pattern": "forward"}"#),
        "job.edges[0].to",
        r#""src" is a source, and a source has no input edges"#,
    );
    reject(
        &edges(r#"{"from": "sink", "to": "map", "pattern": "all_to_all"}"#),
        "job.edges[0].from",
        r#""sink" is a sink, and a sink has no output edges"#,
    );
    reject(
        &edges(r#"{"from": "src", "to": "map", "pattern": "sideways"}"#),
        "job.edges[0].pattern",
        "unknown variant `sideways`",
    );
}

#[test]
fn rejects_a_partitioner_on_a_forward_edge() {
    reject(
        &edges(r#"{"from": "src", "to": "map", "pattern": "forward", "partitioner": "key_hash"}"#),
        "job.edges[0].partitioner",
        "`partitioner` only applies to all_to_all edges",
    );
    // Forward is pointwise, so it may change parallelism (map 2 -> sink 1), as in Flink.
    let s = ok(&edges(
        r#"{"from": "src", "to": "map", "pattern": "forward"},
           {"from": "map", "to": "sum", "pattern": "all_to_all"},
           {"from": "sum", "to": "sink", "pattern": "forward"}"#,
    ));
    assert_eq!(s.job.edges[2].pattern, Pattern::Forward);
}

#[test]
fn rejects_keyed_sum_inputs_that_are_not_keyed() {
    let phrase = "keyed_sum keys its state by record key, so every input edge must be all_to_all \
                  with partitioner key_hash, like Flink's keyBy";
    reject(
        &edges(r#"{"from": "src", "to": "sum", "pattern": "forward"}"#),
        "job.edges[0].pattern",
        phrase,
    );
    reject(
        &edges(
            r#"{"from": "src", "to": "sum", "pattern": "all_to_all", "partitioner": "round_robin"}"#,
        ),
        "job.edges[0].partitioner",
        phrase,
    );
}

#[test]
fn rejects_a_cycle_naming_its_vertices_in_order() {
    let text = graph(
        r#"{"id": "src", "operator": "source", "parallelism": 1},
           {"id": "a", "operator": "map", "parallelism": 1},
           {"id": "b", "operator": "map", "parallelism": 1},
           {"id": "c", "operator": "map", "parallelism": 1}"#,
        r#"{"from": "src", "to": "a", "pattern": "forward"},
           {"from": "a", "to": "b", "pattern": "forward"},
           {"from": "b", "to": "c", "pattern": "forward"},
           {"from": "c", "to": "a", "pattern": "forward"}"#,
    );
    reject(
        &text,
        "job.edges[3]",
        "the edges form a cycle: a -> b -> c -> a",
    );
}

#[test]
fn rejects_a_vertex_without_input_that_is_not_a_source() {
    reject(
        &edges(
            r#"{"from": "src", "to": "map", "pattern": "forward"},
               {"from": "map", "to": "sink", "pattern": "all_to_all"}"#,
        ),
        "job.vertices[2]",
        r#""sum" is a keyed_sum vertex without an input edge"#,
    );
}

#[test]
fn rejects_a_cluster_that_cannot_host_the_job() {
    reject(
        &with(r#""cluster": {"task_managers": 0}"#),
        "cluster.task_managers",
        "must be at least 1",
    );
    reject(
        &with(r#""cluster": {"slots_per_task_manager": 0}"#),
        "cluster.slots_per_task_manager",
        "must be at least 1",
    );
    reject(
        &with(r#""cluster": {"task_managers": 1, "slots_per_task_manager": 1}"#),
        "cluster.slots_per_task_manager",
        "the job needs 2 (with Flink's default slot sharing, as many as its largest \
         parallelism, \"src\"'s), but the cluster has 1 task managers x 1 slots = 1",
    );
    // Exactly enough is enough.
    let s = ok(&with(
        r#""cluster": {"task_managers": 2, "slots_per_task_manager": 1}"#,
    ));
    assert_eq!(s.cluster.slots_per_task_manager, 1);
}

#[test]
fn rejects_zero_capacities_and_budgets() {
    reject(
        &with(r#""network": {"channel_capacity": 0}"#),
        "network.channel_capacity",
        "must be at least 1",
    );
    reject(
        &with(r#""budget": {"max_events": 0}"#),
        "budget.max_events",
        "must be at least 1",
    );
    reject(
        &with(r#""budget": {"max_time": "0ms"}"#),
        "budget.max_time",
        "must be longer than 0",
    );
}

#[test]
fn rejects_bad_expectations() {
    reject(
        &with(r#""expect": {"status": "DONE"}"#),
        "expect.status",
        r#"unknown job status "DONE"; expected one of Flink's job statuses: INITIALIZING"#,
    );
    reject(
        &with(r#""expect": {"status": "finished"}"#),
        "expect.status",
        "unknown job status",
    );
    reject(
        &with(r#""expect": {"violations": ["consistent-cut", "exactly-once"]}"#),
        "expect.violations[1]",
        r#"unknown invariant "exactly-once"; expected one of: exactly-once-output"#,
    );
    reject(
        &with(r#""expect": {"sinks": {"src": 3}}"#),
        "expect.sinks.src",
        r#""src" is not a sink vertex; the sink vertices are "sink""#,
    );
    reject(
        &with(r#""expect": {"sinks": {"sink": 3, "sink": 4}}"#),
        "expect.sinks.sink",
        "listed twice",
    );
    reject(
        &with(r#""expect": {"sinks": {"sink": "many"}}"#),
        "expect.sinks.sink",
        "expected u64",
    );
    reject(
        &with(r#""expect": {"trace_hash": "c0ffee"}"#),
        "expect.trace_hash",
        r#""c0ffee" is not a trace hash; expected "0x" and 16 hex digits"#,
    );
    reject(
        &with(r#""expect": {"trace_hash": "0xc0ffee"}"#),
        "expect.trace_hash",
        "16 hex digits",
    );
    reject(
        &with(r#""expect": {"trace_hash": 12}"#),
        "expect.trace_hash",
        "invalid type: integer `12`",
    );
}

#[test]
fn rejects_what_is_not_implemented_yet_saying_so() {
    reject(
        &with(r#""mode": "batch""#).replacen(r#""mode": "streaming","#, "", 1),
        "mode",
        "batch execution (FLIP-383) is not implemented yet",
    );
    reject(
        &edges(
            r#"{"from": "src", "to": "map", "pattern": "forward"},
               {"from": "map", "to": "sum", "pattern": "all_to_all", "exchange": "blocking"},
               {"from": "sum", "to": "sink", "pattern": "all_to_all"}"#,
        ),
        "job.edges[1].exchange",
        "blocking exchanges in streaming mode are not implemented yet",
    );
    reject(
        &graph(
            r#"{"id": "s", "operator": "source", "parallelism": 1},
               {"id": "k", "operator": "sink", "parallelism": 1, "delivery": "two_phase_commit"}"#,
            r#"{"from": "s", "to": "k", "pattern": "forward"}"#,
        ),
        "job.vertices[1].delivery",
        "needs checkpointing, which is not implemented yet",
    );
}

#[test]
fn reports_the_first_problem_only() {
    // Two problems: the bad vertex comes first in the document, and the unsupported mode is
    // only reported for a file that is otherwise valid.
    let text = r#"{"name": "t", "mode": "batch", "job": {"vertices": [
        {"id": "s", "operator": "source", "parallelism": 0}]},
        "cluster": {"task_managers": 0}}"#;
    reject(text, "job.vertices[0].parallelism", "between 1 and 100000");
}
