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
                adaptive: false,
                chain: Chain::single(
                    "src",
                    Operator::Source {
                        records: vec![Records::Bounded(100), Records::Bounded(400)],
                        record_interval: DurationRange::fixed(Duration::from_millis(1)),
                    },
                ),
                process_time: fixed_us(10),
                splits: None,
            },
            Vertex {
                id: "sum".into(),
                parallelism: 2,
                adaptive: false,
                chain: Chain::single("sum", Operator::KeyedSum { keys: 16 }),
                process_time: range(Duration::from_micros(20), Duration::from_micros(200)),
                splits: None,
            },
            Vertex {
                id: "sink".into(),
                parallelism: 1,
                adaptive: false,
                chain: Chain::single(
                    "sink",
                    Operator::Sink {
                        delivery: Delivery::AtLeastOnce,
                    },
                ),
                process_time: fixed_us(10),
                splits: None,
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
            slots_per_task_manager: 1,
            task_initialization: crate::scenario::DurationRange::fixed(Duration::ZERO),
        }
    );
    assert_eq!(
        s.network,
        Network {
            channel_latency: range(Duration::from_micros(50), Duration::from_micros(500)),
            rpc_latency: range(Duration::from_micros(200), Duration::from_millis(2)),
            channel_capacity: 8,
            channels: vec![],
            buffers: None,
        }
    );
    assert_eq!(
        s.budget,
        Budget {
            max_events: 5_000_000,
            max_time: Duration::from_secs(60),
            max_pending: 10_000_000,
        }
    );
    assert_eq!(s.tie_break, TieBreak::Insertion);
    assert_eq!(s.checkpointing, None);
    assert_eq!(s.bug, None);
    assert_eq!(
        s.expect,
        Expect {
            status: Some(JobStatus::Finished),
            violations: vec![],
            sink_records: Some(500),
            sinks: [("sink".to_owned(), 500)].into_iter().collect(),
            trace_hash: None,
            checkpoints: vec![],
            completed_checkpoints: None,
            retrigger_rpcs: None,
            committed_records: None,
            failovers: None,
            reconciliations: None,
            rpcs_kept: None,
            rpcs_resent: None,
            restores: None,
            recoveries: None,
            parallelism: None,
            speculative_attempts: None,
            speculative_wins: None,
        }
    );
    assert!(s.faults.is_empty());
    assert_eq!(s.heal_at, None);
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
        *s.job.vertices[0].chain.head(),
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
            slots_per_task_manager: 2,
            task_initialization: crate::scenario::DurationRange::fixed(Duration::ZERO),
        }
    );
    assert_eq!(
        s.network,
        Network {
            channel_latency: range(Duration::from_micros(50), Duration::from_micros(500)),
            rpc_latency: range(Duration::from_micros(200), Duration::from_millis(2)),
            channel_capacity: 8,
            channels: vec![],
            buffers: None,
        }
    );
    assert_eq!(
        s.budget,
        Budget {
            max_events: 10_000_000,
            max_time: Duration::from_secs(3600),
            max_pending: 10_000_000,
        }
    );
    assert_eq!(s.expect, Expect::default());
    assert!(s.faults.is_empty());
    assert_eq!(s.heal_at, None);
    assert_eq!(
        s.jobmaster,
        JobMasterConfig {
            failover: Failover::Restart,
            restart_strategy: RestartStrategy {
                delay: Duration::from_millis(10),
                max_attempts: 5,
            },
            failover_scope: FailoverScope::Region,
            heartbeat_timeout: Duration::from_millis(50),
            reconcile_timeout: Duration::from_millis(50),
            terminal_state_retention: Duration::from_millis(200),
        }
    );
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
    assert_eq!(
        *s.job.vertices[1].chain.head(),
        Operator::KeyedSum { keys: 16 }
    );
    assert_eq!(
        *s.job.vertices[2].chain.head(),
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
        match s.job.vertices[0].chain.head() {
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

/// A batch scenario (P2) reads with Flink's defaults, and settings only streaming has are
/// refused with the place to fix.
#[test]
fn batch_scenarios_read_with_their_defaults_and_refuse_streaming_only_settings() {
    let batch = r#"{"name": "t", "mode": "batch", "job": {
        "vertices": [{"id": "src", "operator": "source", "parallelism": 2, "records": 30},
                     {"id": "agg", "operator": "keyed_sum", "parallelism": "auto"},
                     {"id": "out", "operator": "sink", "parallelism": 1}],
        "edges": [{"from": "src", "to": "agg", "pattern": "all_to_all"},
                  {"from": "agg", "to": "out", "pattern": "all_to_all"}]}}"#;
    let s = parse_valid(batch, "t.json").expect("a valid batch scenario");
    assert_eq!(s.mode, Mode::Batch);
    assert_eq!(s.job.edges[0].exchange, Exchange::Blocking);
    assert!(s.job.vertices[1].adaptive);
    let b = s.batch.expect("a batch block with defaults");
    assert_eq!(s.job.vertices[1].parallelism, b.adaptive.max);
    assert_eq!(b.job_events.flush_interval, Duration::from_secs(1));
    assert_eq!(b.previous_worker_timeout, Duration::from_secs(30));
    assert_eq!(b.coordinators[0].map(|c| c.splits), Some(8));
    assert!(b.recovery_enabled());
    let refuse = |from: &str, to: &str, path: &str, says: &str| {
        let e = parse_valid(&batch.replacen(from, to, 1), "t.json").expect_err(to);
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    refuse(
        r#""mode": "batch""#,
        r#""mode": "streaming""#,
        "job.vertices[1].parallelism",
        "only applies in mode",
    );
    refuse(
        r#""records": 30"#,
        r#""records": [30, 40]"#,
        "job.vertices[0].records",
        "reads splits",
    );
    refuse(
        r#""pattern": "all_to_all"}"#,
        r#""pattern": "all_to_all", "exchange": "pipelined"}"#,
        "job.edges[0].exchange",
        "blocking exchanges only",
    );
    let tail = r#"]}}"#;
    refuse(
        tail,
        r#"]}, "cluster": {"task_initialization": "1ms"}}"#,
        "cluster.task_initialization",
        "only applies to streaming jobs",
    );
    refuse(
        tail,
        r#"]}, "checkpointing": {}}"#,
        "checkpointing",
        "does not checkpoint",
    );
    refuse(
        tail,
        r#"]}, "batch": {"coordinators": {"agg": {"splits": 3}}}}"#,
        "batch.coordinators.agg.splits",
        "not a source",
    );
    refuse(
        tail,
        r#"]}, "batch": {"job_events": {"flush_interval": "0ms"}}}"#,
        "batch.job_events.flush_interval",
        "longer than 0",
    );
    refuse(
        tail,
        r#"]}, "batch": {"adaptive_parallelism": {"min": 4, "max": 2}}}"#,
        "batch.adaptive_parallelism.max",
        "at least `min`",
    );
    refuse(
        tail,
        r#"]}, "faults": [{"at": "1ms", "fault": "delay_spike", "extra": "1ms", "duration": "1ms", "target": "channels"}]}"#,
        "faults[0].target",
        "a batch job has no data channels",
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
        "needs `operator`",
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
            "`records` only applies to source operators",
        ),
        (
            r#""operator": "sink", "record_interval": "1ms""#,
            "record_interval",
            "`record_interval` only applies to source operators",
        ),
        (
            r#""operator": "map", "keys": 4"#,
            "keys",
            "`keys` only applies to keyed_sum operators",
        ),
        (
            r#""operator": "keyed_sum", "delivery": "at_least_once""#,
            "delivery",
            "`delivery` only applies to sink operators",
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
        "must be between 1 and",
    );
    reject(
        &with(r#""budget": {"max_time": "0ms"}"#),
        "budget.max_time",
        "must be longer than 0",
    );
}

/// F1.14: the buffer settings, each with its own path; all but `buffer_size` need it.
#[test]
fn network_buffers_are_checked_field_by_field() {
    let s = ok(&with(r#""network": {"buffer_size": 32768}"#));
    let b = s.network.buffers.expect("buffers are on");
    assert_eq!(
        (b.size_bytes, b.record_bytes, b.records_per_buffer()),
        (32768, 100, 327)
    );
    assert_eq!(b.timeout, Duration::from_millis(100), "Flink's default");
    assert_eq!((b.exclusive_per_channel, b.floating_per_gate), (2, 8));
    assert_eq!(ok(&with("")).network.buffers, None, "off by default");
    let cases = [
        (
            r#"{"buffer_timeout": "5ms"}"#,
            "network.buffer_timeout",
            "needs network.buffer_size",
        ),
        (
            r#"{"record_bytes": 10}"#,
            "network.record_bytes",
            "needs network.buffer_size",
        ),
        (
            r#"{"floating_buffers_per_gate": 1}"#,
            "network.floating_buffers_per_gate",
            "needs network.buffer_size",
        ),
        (
            r#"{"buffer_size": 0}"#,
            "network.buffer_size",
            "1 to 1073741824",
        ),
        (
            r#"{"buffer_size": -1}"#,
            "network.buffer_size",
            "invalid value",
        ),
        (
            r#"{"buffer_size": 64, "record_bytes": 100}"#,
            "network.record_bytes",
            "1 to network.buffer_size (64)",
        ),
        (
            r#"{"buffer_size": 640, "exclusive_buffers_per_channel": 0}"#,
            "network.exclusive_buffers_per_channel",
            "1 to 1000",
        ),
        (
            r#"{"buffer_size": 640, "floating_buffers_per_gate": 10001}"#,
            "network.floating_buffers_per_gate",
            "at most 10000",
        ),
        (
            r#"{"buffer_size": 640, "buffer_timeout": "soon"}"#,
            "network.buffer_timeout",
            "soon",
        ),
        (
            r#"{"buffer_size": 640, "channel_capacity": 4}"#,
            "network.channel_capacity",
            "credit is per buffer",
        ),
    ];
    for (network, path, phrase) in cases {
        reject(&with(&format!(r#""network": {network}"#)), path, phrase);
    }
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
        &with(r#""batch": {}"#),
        "batch",
        "only applies to mode \"batch\"",
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

/// `src` (source, 2) -> `sum` (keyed_sum, 3) -> `sink` (sink, 1, two-phase commit), with the
/// given extra top-level fields (`""` for none).
fn two_phase(extra: &str) -> String {
    let comma = if extra.is_empty() { "" } else { "," };
    format!(
        r#"{{"name": "t", "mode": "streaming", "job": {{
            "vertices": [
                {{"id": "src", "operator": "source", "parallelism": 2}},
                {{"id": "sum", "operator": "keyed_sum", "parallelism": 3}},
                {{"id": "sink", "operator": "sink", "parallelism": 1, "delivery": "two_phase_commit"}}
            ],
            "edges": [
                {{"from": "src", "to": "sum", "pattern": "all_to_all"}},
                {{"from": "sum", "to": "sink", "pattern": "all_to_all"}}
            ]
        }}{comma} {extra}}}"#
    )
}

/// [`two_phase`] with an empty checkpointing block and the given `expect.checkpoints` list body.
fn expect_checkpoints(list: &str) -> String {
    two_phase(&format!(
        r#""checkpointing": {{}}, "expect": {{"checkpoints": [{list}]}}"#
    ))
}

#[test]
fn an_empty_checkpointing_block_takes_every_default() {
    let s = ok(&with(r#""checkpointing": {}"#));
    assert_eq!(
        s.checkpointing,
        Some(Checkpointing {
            interval: Some(Duration::from_millis(20)),
            trigger_at: vec![],
            timeout: Duration::from_secs(1),
            max_concurrent: 1,
            min_pause: Duration::ZERO,
            mode: CheckpointMode::Aligned,
            alignment_timeout: None,
            finish_protocol: FinishProtocol::Flink,
            flush_before_finish: false,
            async_duration: crate::scenario::DurationRange::fixed(Duration::ZERO),
            tolerable_failures: None,
            cancel_markers: false,
        })
    );
    assert_eq!(s.bug, None);
    // Absent and null both disable checkpointing.
    assert_eq!(ok(&with("")).checkpointing, None);
    assert_eq!(ok(&with(r#""checkpointing": null"#)).checkpointing, None);
    assert_eq!(ok(&with(r#""bug": null"#)).bug, None);
}

#[test]
fn a_full_checkpointing_block_and_its_expectations_read_back() {
    // The checkpointing example of the module doc.
    let block = r#""checkpointing": {
          "interval": null, "trigger_at": ["40ms", "5ms"], "timeout": "500ms", "max_concurrent": 2,
          "min_pause": "1ms", "mode": "aligned", "alignment_timeout": null,
          "finish_protocol": "option1", "flush_before_finish": false
        }"#;
    let s = ok(&two_phase(&format!(
        r#"{block}, "bug": "skip-retrigger-descendants",
        "expect": {{
          "checkpoints": [
            {{"id": 1, "outcome": "completed", "triggered": ["src[1]", "src[0]"], "finished": [],
              "fully_finished": []}},
            {{"id": 2, "outcome": "aborted", "abort_reason": "CHECKPOINT_EXPIRED",
              "triggered": ["sum[2]"], "finished": ["src[0]", "src[1]"], "fully_finished": ["src"]}},
            {{"id": 7, "outcome": "never_triggered"}},
            {{"id": 3}}
          ],
          "completed_checkpoints": 1, "retrigger_rpcs": 4, "committed_records": 200
        }}"#
    )));
    assert_eq!(
        s.checkpointing,
        Some(Checkpointing {
            interval: None,
            // Sorted, whatever the order in the file.
            trigger_at: vec![Duration::from_millis(5), Duration::from_millis(40)],
            timeout: Duration::from_millis(500),
            max_concurrent: 2,
            min_pause: Duration::from_millis(1),
            mode: CheckpointMode::Aligned,
            alignment_timeout: None,
            finish_protocol: FinishProtocol::Option1,
            flush_before_finish: false,
            async_duration: crate::scenario::DurationRange::fixed(Duration::ZERO),
            tolerable_failures: None,
            cancel_markers: false,
        })
    );
    assert_eq!(s.bug, Some(crate::bug::Bug::SkipRetriggerDescendants));
    assert_eq!(
        *s.job.vertices[2].chain.head(),
        Operator::Sink {
            delivery: Delivery::TwoPhaseCommit
        }
    );
    let names = |list: &[&str]| Some(list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        s.expect.checkpoints,
        vec![
            ExpectedCheckpoint {
                id: 1,
                outcome: Some(CheckpointOutcome::Completed),
                abort_reason: None,
                // As written: the checker compares them as sets.
                triggered: names(&["src[1]", "src[0]"]),
                finished: names(&[]),
                fully_finished: names(&[]),
                duration_at_least: None,
                duration_at_most: None,
                channel_state_at_least: None,
                channel_state_at_most: None,
            },
            ExpectedCheckpoint {
                id: 2,
                outcome: Some(CheckpointOutcome::Aborted),
                abort_reason: Some("CHECKPOINT_EXPIRED".into()),
                triggered: names(&["sum[2]"]),
                finished: names(&["src[0]", "src[1]"]),
                fully_finished: names(&["src"]),
                duration_at_least: None,
                duration_at_most: None,
                channel_state_at_least: None,
                channel_state_at_most: None,
            },
            ExpectedCheckpoint {
                id: 7,
                outcome: Some(CheckpointOutcome::NeverTriggered),
                abort_reason: None,
                triggered: None,
                finished: None,
                fully_finished: None,
                duration_at_least: None,
                duration_at_most: None,
                channel_state_at_least: None,
                channel_state_at_most: None,
            },
            ExpectedCheckpoint {
                id: 3,
                outcome: None,
                abort_reason: None,
                triggered: None,
                finished: None,
                fully_finished: None,
                duration_at_least: None,
                duration_at_most: None,
                channel_state_at_least: None,
                channel_state_at_most: None,
            },
        ]
    );
    assert_eq!(s.expect.completed_checkpoints, Some(1));
    assert_eq!(s.expect.retrigger_rpcs, Some(4));
    assert_eq!(s.expect.committed_records, Some(200));
}

#[test]
fn every_finish_protocol_and_bug_name_reads() {
    let protocols = [
        ("option1", FinishProtocol::Option1),
        ("option2", FinishProtocol::Option2),
        ("flink", FinishProtocol::Flink),
        ("legacy", FinishProtocol::Legacy),
    ];
    for (name, protocol) in protocols {
        let s = ok(&with(&format!(
            r#""checkpointing": {{"finish_protocol": "{name}"}}"#
        )));
        assert_eq!(s.checkpointing.unwrap().finish_protocol, protocol);
    }
    for bug in crate::bug::Bug::ALL {
        let s = ok(&with(&format!(r#""bug": "{}""#, bug.name())));
        assert_eq!(s.bug, Some(bug));
    }
}

#[test]
fn rejects_bad_checkpointing_blocks() {
    let block = |fields: &str| with(&format!(r#""checkpointing": {{{fields}}}"#));
    reject(
        &with(r#""checkpointing": true"#),
        "checkpointing",
        "expected a JSON object",
    );
    reject(
        &block(r#""intervall": "1ms""#),
        "checkpointing.intervall",
        "unknown field `intervall`",
    );
    reject(
        &block(r#""interval": "0ms""#),
        "checkpointing.interval",
        "must be longer than 0; use null for no periodic trigger",
    );
    reject(
        &block(r#""interval": "1ms..2ms""#),
        "checkpointing.interval",
        "this field takes one duration",
    );
    reject(
        &block(r#""interval": 20"#),
        "checkpointing.interval",
        "invalid type: integer `20`",
    );
    reject(
        &block(r#""trigger_at": ["1ms", "2 fortnights"]"#),
        "checkpointing.trigger_at[1]",
        r#""2 fortnights" is not a duration"#,
    );
    reject(
        &block(r#""trigger_at": ["10ms", "5ms", "10000us"]"#),
        "checkpointing.trigger_at[2]",
        "10ms is listed twice: checkpointing.trigger_at[0] is the same instant",
    );
    reject(
        &block(r#""interval": null"#),
        "checkpointing",
        "no checkpoint would ever be triggered",
    );
    reject(
        &block(r#""interval": null, "trigger_at": []"#),
        "checkpointing",
        "no checkpoint would ever be triggered",
    );
    reject(
        &block(r#""timeout": "0""#),
        "checkpointing.timeout",
        "must be longer than 0",
    );
    reject(
        &block(r#""timeout": null"#),
        "checkpointing.timeout",
        "invalid type: null",
    );
    reject(
        &block(r#""max_concurrent": 0"#),
        "checkpointing.max_concurrent",
        "must be between 1 and 64, not 0: pending checkpoints are tracked in a 64-wide window",
    );
    reject(
        &block(r#""max_concurrent": 65"#),
        "checkpointing.max_concurrent",
        "must be between 1 and 64, not 65",
    );
    reject(
        &block(r#""min_pause": "1ms..2ms""#),
        "checkpointing.min_pause",
        "this field takes one duration",
    );
    reject(
        &block(r#""alignment_timeout": "1ms..2ms""#),
        "checkpointing.alignment_timeout",
        "this field takes one duration",
    );
    reject(
        &block(r#""mode": "semi_aligned""#),
        "checkpointing.mode",
        "unknown variant `semi_aligned`",
    );
    reject(
        &block(r#""mode": "at_least_once", "alignment_timeout": "1ms""#),
        "checkpointing.alignment_timeout",
        "at-least-once barriers never block a channel",
    );
    reject(
        &block(r#""async_duration": "soon""#),
        "checkpointing.async_duration",
        "soon",
    );
    reject(
        &block(r#""async_duration": "3ms..1ms""#),
        "checkpointing.async_duration",
        "",
    );
    reject(
        &block(r#""finish_protocol": "option3""#),
        "checkpointing.finish_protocol",
        "unknown variant `option3`",
    );
    reject(
        &block(r#""flush_before_finish": "yes""#),
        "checkpointing.flush_before_finish",
        "expected a boolean",
    );
    // A periodic interval alone, or trigger instants alone, is enough.
    let s = ok(&block(r#""interval": null, "trigger_at": ["0", "3ms"]"#));
    let checkpointing = s.checkpointing.unwrap();
    assert_eq!(checkpointing.interval, None);
    assert_eq!(
        checkpointing.trigger_at,
        vec![Duration::ZERO, Duration::from_millis(3)]
    );
    assert_eq!(
        ok(&block(r#""max_concurrent": 64"#))
            .checkpointing
            .unwrap()
            .max_concurrent,
        64
    );
}

#[test]
fn rejects_an_unknown_bug_listing_the_known_ones() {
    let known: Vec<&str> = crate::bug::Bug::ALL.iter().map(|b| b.name()).collect();
    reject(
        &with(r#""bug": "eop-not-alligned""#),
        "bug",
        &format!(
            r#"unknown bug "eop-not-alligned"; expected null or one of: {}"#,
            known.join(", ")
        ),
    );
    reject(&with(r#""bug": 3"#), "bug", "invalid type: integer `3`");
}

#[test]
fn rejects_a_two_phase_commit_sink_without_checkpointing() {
    let phrase = "a two_phase_commit sink commits on checkpoint completion, so it needs a \
                  `checkpointing` block";
    reject(&two_phase(""), "job.vertices[2].delivery", phrase);
    reject(
        &two_phase(r#""checkpointing": null"#),
        "job.vertices[2].delivery",
        phrase,
    );
}

#[test]
fn rejects_checkpoint_expectations_without_checkpointing() {
    let phrase = "checkpointing is disabled (the scenario has no `checkpointing` block)";
    reject(
        &with(r#""expect": {"checkpoints": [{"id": 1}]}"#),
        "expect.checkpoints",
        phrase,
    );
    reject(
        &with(r#""expect": {"completed_checkpoints": 0}"#),
        "expect.completed_checkpoints",
        phrase,
    );
    reject(
        &with(r#""expect": {"retrigger_rpcs": 0}"#),
        "expect.retrigger_rpcs",
        phrase,
    );
    // An empty list checks nothing, so it needs nothing.
    assert!(ok(&with(r#""expect": {"checkpoints": []}"#))
        .expect
        .checkpoints
        .is_empty());
    reject(
        &with(r#""checkpointing": {}, "expect": {"committed_records": 5}"#),
        "expect.committed_records",
        r#"no sink has delivery "two_phase_commit", so no record is ever committed"#,
    );
}

#[test]
fn rejects_bad_expected_checkpoints() {
    reject(
        &expect_checkpoints(r#"{"outcome": "completed"}"#),
        "expect.checkpoints[0]",
        "missing field `id`",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "state": "completed"}"#),
        "expect.checkpoints[0].state",
        "unknown field `state`",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1}, {"id": 0}"#),
        "expect.checkpoints[1].id",
        "must be at least 1",
    );
    reject(
        &expect_checkpoints(r#"{"id": -1}"#),
        "expect.checkpoints[0].id",
        "expected u64",
    );
    reject(
        &expect_checkpoints(r#"{"id": 2}, {"id": 3}, {"id": 2, "outcome": "aborted"}"#),
        "expect.checkpoints[2].id",
        "checkpoint 2 is already described by expect.checkpoints[0]",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "outcome": "expired"}"#),
        "expect.checkpoints[0].outcome",
        "unknown variant `expired`",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "outcome": "completed", "abort_reason": "EXPIRED"}"#),
        "expect.checkpoints[0].abort_reason",
        "only an aborted checkpoint has an abort reason, and this one is expected to be \
         completed",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "abort_reason": ""}"#),
        "expect.checkpoints[0].abort_reason",
        "must not be empty",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "outcome": "never_triggered", "finished": []}"#),
        "expect.checkpoints[0].finished",
        "a checkpoint that is never triggered has no trigger plan",
    );
    reject(
        &expect_checkpoints(r#"{"id": 1, "triggered": "src[0]"}"#),
        "expect.checkpoints[0].triggered",
        "invalid type: string \"src[0]\", expected a sequence",
    );
    // An abort reason alone implies nothing else.
    let s = ok(&expect_checkpoints(
        r#"{"id": 1, "abort_reason": "NOT_ALL_REQUIRED_TASKS_RUNNING"}"#,
    ));
    assert_eq!(s.expect.checkpoints[0].outcome, None);
}

#[test]
fn rejects_expected_subtasks_and_vertices_that_do_not_exist() {
    let triggered = |list: &str| {
        expect_checkpoints(&format!(
            r#"{{"id": 1}}, {{"id": 2}}, {{"id": 3, "triggered": [{list}]}}"#
        ))
    };
    let at = "expect.checkpoints[2].triggered[1]";
    reject(
        &triggered(r#""src[0]", "src[2]""#),
        at,
        r#""src[2]" is not a subtask: "src" has parallelism 2, so its subtasks are src[0] to src[1]"#,
    );
    reject(
        &triggered(r#""src[0]", "sink[1]""#),
        at,
        r#""sink" has parallelism 1, so its only subtask is sink[0]"#,
    );
    reject(
        &triggered(r#""src[0]", "sum[99999999999999999999999]""#),
        at,
        r#""sum" has parallelism 3, so its subtasks are sum[0] to sum[2]"#,
    );
    reject(
        &triggered(r#""src[0]", "map[0]""#),
        at,
        r#"unknown vertex "map" in "map[0]"; the vertices are "src", "sum", "sink""#,
    );
    for malformed in [
        "src", "src0", "src[]", "[0]", "src[-1]", "src[01]", "src[ 1]", "src[1] ",
    ] {
        reject(
            &triggered(&format!(r#""src[0]", "{malformed}""#)),
            at,
            &format!(
                r#"{malformed:?} is not a subtask; expected a vertex id and a 0-based index, like "src[0]""#
            ),
        );
    }
    reject(
        &triggered(r#""src[0]", "src[0]""#),
        at,
        r#""src[0]" is listed twice: expect.checkpoints[2].triggered[0] is the same; the list is compared as a set"#,
    );
    reject(
        &expect_checkpoints(r#"{"id": 4, "finished": ["sum[3]"]}"#),
        "expect.checkpoints[0].finished[0]",
        r#""sum" has parallelism 3"#,
    );
    reject(
        &expect_checkpoints(r#"{"id": 4, "fully_finished": ["src", "src[0]"]}"#),
        "expect.checkpoints[0].fully_finished[1]",
        r#"unknown vertex "src[0]"; fully_finished lists vertex ids, and the vertices are "src", "sum", "sink""#,
    );
    reject(
        &expect_checkpoints(r#"{"id": 4, "fully_finished": ["src", "src"]}"#),
        "expect.checkpoints[0].fully_finished[1]",
        "listed twice",
    );
    // The largest index is a subtask, and a vertex id may itself contain brackets.
    ok(&triggered(r#""src[1]", "sum[2]", "sink[0]""#));
    let bracketed = r#"{"name": "t", "mode": "streaming",
        "job": {"vertices": [{"id": "in[x]", "operator": "source", "parallelism": 2}]},
        "checkpointing": {},
        "expect": {"checkpoints": [{"id": 1, "triggered": ["in[x][1]"]}]}}"#;
    ok(bracketed);
}

/// [`two_phase`] with an empty checkpointing block and the given `faults` list body and extra
/// top-level fields (`""` for none).
fn faults(list: &str, extra: &str) -> String {
    let comma = if extra.is_empty() { "" } else { "," };
    two_phase(&format!(
        r#""checkpointing": {{}}, "faults": [{list}]{comma} {extra}"#
    ))
}

/// [`faults`] with the one fault `{fields}`, `faults[0]`.
fn one_fault(fields: &str) -> String {
    faults(&format!("{{{fields}}}"), "")
}

#[test]
fn fault_kinds_take_their_defaults() {
    let s = ok(&faults(
        r#"{"at": "1ms", "fault": "lose_task_manager", "task_manager": 1},
           {"at": "2ms", "fault": "crash_jobmaster"},
           {"at": "3ms", "fault": "delay_spike", "extra": "1ms", "duration": "5ms"},
           {"at": "4ms", "fault": "rpc_loss", "probability": 0, "duration": "5ms"}"#,
        "",
    ));
    let kinds: Vec<FaultKind> = s.faults.into_iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        vec![
            FaultKind::LoseTaskManager {
                task_manager: 1,
                restart_after: Duration::from_millis(10),
            },
            FaultKind::CrashJobMaster {
                restart_after: Duration::from_millis(40),
            },
            FaultKind::DelaySpike {
                extra: Duration::from_millis(1),
                duration: Duration::from_millis(5),
                target: SpikeTarget::All,
            },
            FaultKind::RpcLoss {
                probability: 0.0,
                retry_after: Duration::from_millis(5),
                duration: Duration::from_millis(5),
            },
        ]
    );
    assert_eq!(s.heal_at, None);
    // `faults: []` is the same as none, and `at`/`when` of null are absent.
    assert!(ok(&faults("", "")).faults.is_empty());
    assert_eq!(
        ok(&one_fault(
            r#""at": "0", "when": null, "fault": "crash_jobmaster""#
        ))
        .faults[0]
            .trigger,
        FaultTrigger::At(Duration::ZERO)
    );
}

#[test]
fn the_faults_example_of_the_module_doc_reads() {
    let s = ok(&two_phase(
        r#""checkpointing": {},
        "faults": [
          {"at": "150ms", "fault": "fail_task", "task": "sum[1]"},
          {"when": {"checkpoint_pending": 3}, "fault": "crash_jobmaster", "restart_after": "40ms"},
          {"when": {"finished": "src[0]"}, "fault": "delay_spike", "extra": "2ms", "duration": "50ms", "target": "channels"}
        ],
        "heal_at": "200ms""#,
    ));
    assert_eq!(s.faults.len(), 3);
    assert_eq!(s.heal_at, Some(Duration::from_millis(200)));
}

#[test]
fn every_fault_kind_and_predicate_reads_back() {
    let list = r#"
        {"at": "150ms", "fault": "fail_task", "task": "sum[1]"},
        {"when": {"checkpoint_pending": 3}, "fault": "crash_jobmaster", "restart_after": "0"},
        {"when": {"checkpoint_completed": 2}, "fault": "lose_task_manager", "task_manager": 1,
         "restart_after": "20ms"},
        {"when": {"finished": "src[1]"}, "fault": "delay_spike", "extra": "2ms",
         "duration": "50ms", "target": "channels"},
        {"when": {"end_of_input": "sum[2]"}, "fault": "rpc_loss", "probability": 0.25,
         "retry_after": "1ms", "duration": "30ms"},
        {"when": {"waiting_for_final_checkpoint": "sink[0]"}, "fault": "fail_task",
         "task": "sink[0]"},
        {"when": {"all_sources_finished": true}, "fault": "delay_spike", "extra": "1ms",
         "duration": "10ms", "target": "rpcs"},
        {"when": {"event_count": 5000}, "fault": "rpc_loss", "probability": 1, "duration": "1s"}
    "#;
    let s = ok(&faults(
        list,
        r#""heal_at": "150ms",
           "jobmaster": {"failover": "restart", "restart_strategy": {"delay": "0", "max_attempts": 0},
                         "failover_scope": "full", "heartbeat_timeout": "1s"},
           "expect": {"failovers": 3}"#,
    ));
    let task = |vertex, index| SubtaskRef { vertex, index };
    let ms = Duration::from_millis;
    assert_eq!(
        s.faults,
        vec![
            Fault {
                trigger: FaultTrigger::At(ms(150)),
                kind: FaultKind::FailTask { task: task(1, 1) },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::CheckpointPending(3)),
                kind: FaultKind::CrashJobMaster {
                    restart_after: Duration::ZERO,
                },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::CheckpointCompleted(2)),
                kind: FaultKind::LoseTaskManager {
                    task_manager: 1,
                    restart_after: ms(20),
                },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::Finished(task(0, 1))),
                kind: FaultKind::DelaySpike {
                    extra: ms(2),
                    duration: ms(50),
                    target: SpikeTarget::Channels,
                },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::EndOfInput(task(1, 2))),
                kind: FaultKind::RpcLoss {
                    probability: 0.25,
                    retry_after: ms(1),
                    duration: ms(30),
                },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::WaitingForFinalCheckpoint(task(2, 0))),
                kind: FaultKind::FailTask { task: task(2, 0) },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::AllSourcesFinished),
                kind: FaultKind::DelaySpike {
                    extra: ms(1),
                    duration: ms(10),
                    target: SpikeTarget::Rpcs,
                },
            },
            Fault {
                trigger: FaultTrigger::When(Predicate::EventCount(5000)),
                kind: FaultKind::RpcLoss {
                    probability: 1.0,
                    retry_after: ms(5),
                    duration: Duration::from_secs(1),
                },
            },
        ]
    );
    assert_eq!(s.heal_at, Some(ms(150)));
    assert_eq!(
        s.jobmaster,
        JobMasterConfig {
            failover: Failover::Restart,
            restart_strategy: RestartStrategy {
                delay: Duration::ZERO,
                max_attempts: 0,
            },
            failover_scope: FailoverScope::Full,
            heartbeat_timeout: Duration::from_secs(1),
            reconcile_timeout: Duration::from_millis(50),
            terminal_state_retention: Duration::from_millis(200),
        }
    );
    assert_eq!(s.expect.failovers, Some(3));
}

#[test]
fn rejects_bad_fault_shapes() {
    reject(
        &two_phase(r#""faults": {"at": "1ms"}"#),
        "faults",
        "expected a sequence",
    );
    reject(
        &faults(r#""fail_task""#, ""),
        "faults[0]",
        "expected a JSON object",
    );
    reject(
        &one_fault(r#""at": "1ms""#),
        "faults[0]",
        "missing field `fault`",
    );
    reject(
        &one_fault(r#""at": "1ms", "fault": "kill_task""#),
        "faults[0].fault",
        "unknown variant `kill_task`, expected one of `fail_task`, `lose_task_manager`, \
         `disconnect_task_manager`, `crash_jobmaster`, `delay_spike`, `rpc_loss`",
    );
    reject(
        &one_fault(r#""at": "1ms", "fault": "crash_jobmaster", "delay": "1ms""#),
        "faults[0].delay",
        "unknown field `delay`",
    );
    reject(
        &one_fault(r#""at": "1ms..2ms", "fault": "crash_jobmaster""#),
        "faults[0].at",
        "this field takes one duration",
    );
    reject(
        &one_fault(r#""at": "1ms", "fault": "crash_jobmaster", "restart_after": 5"#),
        "faults[0].restart_after",
        "invalid type: integer `5`",
    );
    reject(
        &one_fault(
            r#""at": "1ms", "fault": "delay_spike", "extra": "1ms", "duration": "1ms", "target": "disks""#,
        ),
        "faults[0].target",
        "unknown variant `disks`, expected one of `channels`, `rpcs`, `all`",
    );
    reject(
        &one_fault(r#""at": "1ms", "fault": "rpc_loss", "probability": "half", "duration": "1ms""#),
        "faults[0].probability",
        "invalid type: string \"half\", expected f64",
    );
    reject(
        &one_fault(r#""at": "1ms", "fault": "lose_task_manager", "task_manager": -1"#),
        "faults[0].task_manager",
        "expected u32",
    );
}

#[test]
fn rejects_a_fault_without_exactly_one_trigger() {
    reject(
        &one_fault(r#""at": "1ms", "when": {"event_count": 3}, "fault": "crash_jobmaster""#),
        "faults[0]",
        "has both `at` and `when`; a fault has exactly one trigger",
    );
    reject(
        &faults(
            r#"{"at": "1ms", "fault": "crash_jobmaster"}, {"fault": "crash_jobmaster"}"#,
            "",
        ),
        "faults[1]",
        "has no trigger; give exactly one of `at`",
    );
    reject(
        &one_fault(r#""at": "60001ms", "fault": "crash_jobmaster""#).replacen(
            r#""checkpointing""#,
            r#""budget": {"max_time": "60s"}, "checkpointing""#,
            1,
        ),
        "faults[0].at",
        "60.001s is after budget.max_time (60s), so the fault could never fire",
    );
    // At the very end of the budget is still in time.
    ok(&one_fault(r#""at": "3600s", "fault": "crash_jobmaster""#));
}

#[test]
fn rejects_bad_predicates() {
    let when = |predicate: &str| {
        one_fault(&format!(
            r#""when": {predicate}, "fault": "crash_jobmaster""#
        ))
    };
    reject(
        &when(r#"{"checkpoint_started": 1}"#),
        "faults[0].when.checkpoint_started",
        "unknown field `checkpoint_started`, expected one of `checkpoint_pending`, \
         `checkpoint_completed`, `finished`, `end_of_input`, `waiting_for_final_checkpoint`, \
         `all_sources_finished`, `event_count`, `job_status`",
    );
    reject(
        &when("{}"),
        "faults[0].when",
        "has no predicate; expected an object with exactly one of: checkpoint_pending, \
         checkpoint_completed, finished",
    );
    reject(
        &when(r#"{"event_count": 5, "finished": "src[0]"}"#),
        "faults[0].when",
        "has 2 predicates (`finished`, `event_count`); expected an object with exactly one of",
    );
    reject(
        &when(r#""soon""#),
        "faults[0].when",
        "expected a JSON object",
    );
    reject(
        &when(r#"{"checkpoint_pending": "3"}"#),
        "faults[0].when.checkpoint_pending",
        "expected u64",
    );
    reject(
        &when(r#"{"checkpoint_completed": 0}"#),
        "faults[0].when.checkpoint_completed",
        "must be at least 1: checkpoint ids start at 1",
    );
    reject(
        &when(r#"{"all_sources_finished": false}"#),
        "faults[0].when.all_sources_finished",
        "must be true",
    );
    reject(
        &when(r#"{"event_count": 0}"#),
        "faults[0].when.event_count",
        "must be at least 1",
    );
    reject(
        &when(r#"{"job_status": "DONE"}"#),
        "faults[0].when.job_status",
        "`DONE` is not a job status; expected one of INITIALIZING, CREATED",
    );
    // Subtask names read as in expect.checkpoints, with the same messages.
    reject(
        &when(r#"{"finished": "sum[3]"}"#),
        "faults[0].when.finished",
        r#""sum[3]" is not a subtask: "sum" has parallelism 3, so its subtasks are sum[0] to sum[2]"#,
    );
    reject(
        &when(r#"{"end_of_input": "map[0]"}"#),
        "faults[0].when.end_of_input",
        r#"unknown vertex "map" in "map[0]"; the vertices are "src", "sum", "sink""#,
    );
    reject(
        &when(r#"{"waiting_for_final_checkpoint": "sink"}"#),
        "faults[0].when.waiting_for_final_checkpoint",
        r#""sink" is not a subtask; expected a vertex id and a 0-based index, like "src[0]""#,
    );
}

#[test]
fn waiting_for_final_checkpoint_must_name_a_task_that_waits() {
    let fault = |protocol: &str, task: &str| {
        two_phase(&format!(
            r#""checkpointing": {{"finish_protocol": "{protocol}"}},
               "faults": [{{"when": {{"waiting_for_final_checkpoint": "{task}"}},
                            "fault": "crash_jobmaster"}}]"#
        ))
    };
    let path = "faults[0].when.waiting_for_final_checkpoint";
    // P1.7: under option1 and option2 only the two-phase-commit sink waits.
    for protocol in ["option1", "option2"] {
        ok(&fault(protocol, "sink[0]"));
        reject(
            &fault(protocol, "sum[1]"),
            path,
            "`sum[1]` never waits for a final checkpoint, so this predicate could never hold",
        );
    }
    // F1.5 step 3: under flink every task waits; under legacy none does.
    ok(&fault("flink", "sum[1]"));
    ok(&fault("flink", "src[0]"));
    reject(
        &fault("legacy", "sink[0]"),
        path,
        "use `end_of_input` for the moment its input ends",
    );
}

#[test]
fn rejects_checkpoint_predicates_without_checkpointing() {
    let phrase = "checkpointing is disabled (the scenario has no `checkpointing` block), so this \
                  predicate could never hold";
    for key in ["checkpoint_pending", "checkpoint_completed"] {
        reject(
            &with(&format!(
                r#""faults": [{{"when": {{"{key}": 1}}, "fault": "crash_jobmaster"}}]"#
            )),
            &format!("faults[0].when.{key}"),
            phrase,
        );
    }
    reject(
        &with(
            r#""faults": [{"when": {"waiting_for_final_checkpoint": "sink[0]"}, "fault": "crash_jobmaster"}]"#,
        ),
        "faults[0].when.waiting_for_final_checkpoint",
        phrase,
    );
    // The other predicates need no checkpointing.
    ok(&with(
        r#""faults": [{"when": {"finished": "src[0]"}, "fault": "fail_task", "task": "sink[0]"},
                      {"when": {"all_sources_finished": true}, "fault": "crash_jobmaster"}]"#,
    ));
}

#[test]
fn rejects_fault_fields_of_another_kind_naming_their_kind() {
    let cases = [
        (
            r#""fault": "crash_jobmaster", "task": "src[0]""#,
            "task",
            "`task` only applies to fail_task, trigger_task and fail_snapshot faults, and this one is a crash_jobmaster fault",
        ),
        (
            r#""fault": "fail_task", "task": "src[0]", "task_manager": 0"#,
            "task_manager",
            "`task_manager` only applies to lose_task_manager and disconnect_task_manager \
             faults, and this one is a fail_task fault",
        ),
        (
            r#""fault": "fail_task", "task": "src[0]", "restart_after": "1ms""#,
            "restart_after",
            "`restart_after` only applies to lose_task_manager and crash_jobmaster faults, \
             and this one is a fail_task fault",
        ),
        (
            r#""fault": "rpc_loss", "probability": 0.5, "duration": "1ms", "extra": "1ms""#,
            "extra",
            "`extra` only applies to delay_spike faults, and this one is a rpc_loss fault",
        ),
        (
            r#""fault": "crash_jobmaster", "duration": "1ms""#,
            "duration",
            "`duration` only applies to delay_spike, rpc_loss and disconnect_task_manager faults",
        ),
        (
            r#""fault": "rpc_loss", "probability": 0.5, "duration": "1ms", "target": "rpcs""#,
            "target",
            "`target` only applies to delay_spike faults",
        ),
        (
            r#""fault": "delay_spike", "extra": "1ms", "duration": "1ms", "probability": 0.5"#,
            "probability",
            "`probability` only applies to rpc_loss faults",
        ),
        (
            r#""fault": "delay_spike", "extra": "1ms", "duration": "1ms", "retry_after": "1ms""#,
            "retry_after",
            "`retry_after` only applies to rpc_loss faults, and this one is a delay_spike fault",
        ),
    ];
    for (fields, field, phrase) in cases {
        reject(
            &one_fault(&format!(r#""at": "1ms", {fields}"#)),
            &format!("faults[0].{field}"),
            phrase,
        );
    }
}

#[test]
fn rejects_missing_and_bad_fault_fields() {
    let fault = |fields: &str| one_fault(&format!(r#""at": "1ms", {fields}"#));
    reject(
        &fault(r#""fault": "fail_task""#),
        "faults[0]",
        r#"missing field `task`: a fail_task fault needs the subtask to fail, like "src[0]""#,
    );
    reject(
        &fault(r#""fault": "fail_task", "task": "src[2]""#),
        "faults[0].task",
        r#""src[2]" is not a subtask: "src" has parallelism 2, so its subtasks are src[0] to src[1]"#,
    );
    reject(
        &fault(r#""fault": "fail_task", "task": "snk[0]""#),
        "faults[0].task",
        r#"unknown vertex "snk" in "snk[0]"; the vertices are "src", "sum", "sink""#,
    );
    reject(
        &fault(r#""fault": "lose_task_manager""#),
        "faults[0]",
        "missing field `task_manager`: a lose_task_manager fault needs the number",
    );
    reject(
        &fault(r#""fault": "lose_task_manager", "task_manager": 2"#),
        "faults[0].task_manager",
        "there is no task manager 2: cluster.task_managers is 2, so they are numbered 0 to 1",
    );
    reject(
        &fault(r#""fault": "lose_task_manager", "task_manager": 1"#).replacen(
            r#""checkpointing""#,
            r#""cluster": {"task_managers": 1}, "checkpointing""#,
            1,
        ),
        "faults[0].task_manager",
        "there is no task manager 1: cluster.task_managers is 1, so the only one is 0",
    );
    reject(
        &fault(r#""fault": "delay_spike", "duration": "1ms""#),
        "faults[0]",
        "missing field `extra`: a delay_spike fault needs",
    );
    reject(
        &fault(r#""fault": "delay_spike", "extra": "1ms""#),
        "faults[0]",
        "missing field `duration`: a delay_spike fault needs",
    );
    reject(
        &fault(r#""fault": "delay_spike", "extra": "0", "duration": "1ms""#),
        "faults[0].extra",
        "must be longer than 0",
    );
    reject(
        &fault(r#""fault": "delay_spike", "extra": "1ms", "duration": "0s""#),
        "faults[0].duration",
        "must be longer than 0",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "duration": "1ms""#),
        "faults[0]",
        "missing field `probability`: a rpc_loss fault needs",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "probability": 1.5, "duration": "1ms""#),
        "faults[0].probability",
        "must be a number from 0 to 1, not 1.5",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "probability": -0.1, "duration": "1ms""#),
        "faults[0].probability",
        "must be a number from 0 to 1, not -0.1",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "probability": 0.5, "retry_after": "0", "duration": "1ms""#),
        "faults[0].retry_after",
        "must be longer than 0",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "probability": 0.5"#),
        "faults[0]",
        "missing field `duration`: a rpc_loss fault needs",
    );
    reject(
        &fault(r#""fault": "rpc_loss", "probability": 0.5, "duration": "0""#),
        "faults[0].duration",
        "must be longer than 0",
    );
    // A restart may be immediate.
    ok(&fault(
        r#""fault": "lose_task_manager", "task_manager": 0, "restart_after": "0""#,
    ));
}

#[test]
fn rejects_a_heal_before_a_fault_or_after_the_budget() {
    let list = r#"{"at": "5ms", "fault": "crash_jobmaster"},
                  {"at": "20ms", "fault": "fail_task", "task": "src[0]"},
                  {"when": {"event_count": 100}, "fault": "crash_jobmaster"}"#;
    reject(
        &faults(list, r#""heal_at": "19ms""#),
        "heal_at",
        "19ms is before faults[1].at (20ms): no fault fires in the healed phase",
    );
    reject(
        &faults(list, r#""heal_at": "1ms..2ms""#),
        "heal_at",
        "this field takes one duration",
    );
    reject(
        &faults(list, r#""heal_at": "2s", "budget": {"max_time": "1s"}"#),
        "heal_at",
        "2s is after budget.max_time (1s), so the healed phase would never begin",
    );
    // A heal at the last `at` is in time; a heal without faults is allowed.
    assert_eq!(
        ok(&faults(list, r#""heal_at": "20ms""#)).heal_at,
        Some(Duration::from_millis(20))
    );
    assert_eq!(ok(&with(r#""heal_at": "0""#)).heal_at, Some(Duration::ZERO));
    assert_eq!(ok(&with(r#""heal_at": null"#)).heal_at, None);
}

#[test]
fn rejects_bad_jobmaster_blocks() {
    let block = |fields: &str| with(&format!(r#""jobmaster": {{{fields}}}"#));
    reject(
        &with(r#""jobmaster": "restart""#),
        "jobmaster",
        "expected a JSON object",
    );
    reject(
        &block(r#""failover": "retry""#),
        "jobmaster.failover",
        "unknown variant `retry`, expected `restart` or `reconcile`",
    );
    reject(
        &block(r#""failover_scope": "vertex""#),
        "jobmaster.failover_scope",
        "unknown variant `vertex`, expected `full` or `region`",
    );
    reject(
        &block(r#""restart_strategy": {"delay": "1ms", "attempts": 3}"#),
        "jobmaster.restart_strategy.attempts",
        "unknown field `attempts`",
    );
    reject(
        &block(r#""restart_strategy": {"delay": "1ms..2ms"}"#),
        "jobmaster.restart_strategy.delay",
        "this field takes one duration",
    );
    reject(
        &block(r#""restart_strategy": {"max_attempts": -1}"#),
        "jobmaster.restart_strategy.max_attempts",
        "expected u32",
    );
    reject(
        &block(r#""heartbeat_timeout": "0""#),
        "jobmaster.heartbeat_timeout",
        "must be longer than 0",
    );
    reject(
        &block(r#""reconcile_timeout": "0""#),
        "jobmaster.reconcile_timeout",
        "must be longer than 0",
    );
    reject(
        &block(r#""terminal_state_retention": "5""#),
        "jobmaster.terminal_state_retention",
        "a unit",
    );
    reject(
        &with(r#""expect": {"failovers": -1}"#),
        "expect.failovers",
        "expected u64",
    );
    // Only what is written changes.
    let s = ok(&block(r#""restart_strategy": {"max_attempts": 2}"#));
    assert_eq!(
        s.jobmaster.restart_strategy,
        RestartStrategy {
            delay: Duration::from_millis(10),
            max_attempts: 2,
        }
    );
    assert_eq!(s.jobmaster.failover_scope, FailoverScope::Region);
}

#[test]
fn reconciliation_reads_its_windows_and_expectations() {
    let s = ok(&with(
        r#""jobmaster": {"failover": "reconcile", "reconcile_timeout": "20ms",
                         "terminal_state_retention": "0"},
           "expect": {"reconciliations": ["RUNNING", "FAILING"], "rpcs_kept": 3,
                      "rpcs_resent": 2}"#,
    ));
    assert_eq!(
        (s.expect.rpcs_kept, s.expect.rpcs_resent),
        (Some(3), Some(2))
    );
    assert_eq!(s.jobmaster.failover, Failover::Reconcile);
    assert_eq!(s.jobmaster.reconcile_timeout, Duration::from_millis(20));
    assert_eq!(s.jobmaster.terminal_state_retention, Duration::ZERO);
    use crate::trace::ReconcileOutcome;
    assert_eq!(
        s.expect.reconciliations,
        Some(vec![ReconcileOutcome::Running, ReconcileOutcome::Failing])
    );
    reject(
        &with(r#""expect": {"reconciliations": ["RUNNING"]}"#),
        "expect.reconciliations",
        "the JobMaster never reconciles",
    );
    for field in ["rpcs_kept", "rpcs_resent"] {
        reject(
            &with(&format!(r#""expect": {{"{field}": 0}}"#)),
            &format!("expect.{field}"),
            "the JobMaster never reconciles",
        );
    }
    reject(
        &with(r#""jobmaster": {"failover": "reconcile"}, "expect": {"reconciliations": ["DONE"]}"#),
        "expect.reconciliations[0]",
        "unknown variant `DONE`",
    );
}

#[test]
fn reports_the_first_bad_fault_only() {
    // faults[0] has two problems, its trigger first; faults[1] is never looked at.
    reject(
        &faults(
            r#"{"fault": "fail_task", "task": "nope[0]"},
               {"at": "1ms", "fault": "lose_task_manager", "task_manager": 9}"#,
            "",
        ),
        "faults[0]",
        "has no trigger",
    );
}

#[test]
fn checkpoint_bounds_must_be_satisfiable() {
    let with = |expect: &str| {
        format!(
            r#"{{"name": "t", "mode": "streaming", "checkpointing": {{}}, "job": {{
                "vertices": [{{"id": "src", "operator": "source", "parallelism": 1}},
                             {{"id": "sink", "operator": "sink", "parallelism": 1}}],
                "edges": [{{"from": "src", "to": "sink", "pattern": "forward"}}]}},
                "expect": {{"checkpoints": [{expect}]}}}}"#
        )
    };
    let err = |json: String| parse(&json, "t").expect_err("rejected");
    let e = err(with(
        r#"{"id": 1, "duration_at_least": "5ms", "duration_at_most": "1ms"}"#,
    ));
    assert_eq!(e.path, "expect.checkpoints[0].duration_at_most");
    assert!(e.message.contains("no duration meets both"), "{e}");
    let e = err(with(
        r#"{"id": 1, "channel_state_at_least": 9, "channel_state_at_most": 2}"#,
    ));
    assert_eq!(e.path, "expect.checkpoints[0].channel_state_at_most");
    let e = err(with(
        r#"{"id": 1, "outcome": "aborted", "duration_at_most": "1ms"}"#,
    ));
    assert_eq!(e.path, "expect.checkpoints[0].duration_at_most");
    assert!(e.message.contains("needs a completed checkpoint"), "{e}");
    assert!(parse(
        &with(r#"{"id": 1, "duration_at_least": "1ms", "duration_at_most": "5ms"}"#),
        "t"
    )
    .is_ok());
}

#[test]
fn restores_read_as_sets_of_known_subtasks_and_only_in_streaming() {
    let s = ok(&with(
        r#""expect": {"restores": [{"checkpoint": 2, "scope": "full",
                                    "restarted": ["sink[0]", "src[1]", "src[0]"],
                                    "finished": [], "records_replayed": 7}, {}]}"#,
    ));
    let restores = s.expect.restores.expect("given");
    assert_eq!(restores.len(), 2);
    assert_eq!(restores[0].checkpoint, Some(2));
    assert_eq!(restores[0].scope, Some(crate::scenario::RestoreScope::Full));
    assert_eq!(
        restores[0].restarted.as_deref(),
        Some(
            &[
                "sink[0]".to_owned(),
                "src[0]".to_owned(),
                "src[1]".to_owned()
            ][..]
        )
    );
    assert_eq!(restores[0].records_replayed, Some(7));
    assert_eq!(restores[1], crate::scenario::ExpectedRestore::default());
    reject(
        &with(r#""expect": {"restores": [{"restarted": ["src[2]"]}]}"#),
        "expect.restores[0].restarted[0]",
        "src",
    );
    reject(
        &with(r#""expect": {"restores": [{"finished": ["src[0]", "src[0]"]}]}"#),
        "expect.restores[0].finished[1]",
        "listed twice",
    );
    reject(
        &with(r#""expect": {"restores": [{"scope": "region_of"}]}"#),
        "expect.restores[0].scope",
        "unknown variant",
    );
    reject(
        r#"{"name": "t", "mode": "batch", "job": {"vertices": [
            {"id": "src", "operator": "source", "parallelism": 1}]},
            "expect": {"restores": []}}"#,
        "expect.restores",
        "only applies to streaming jobs",
    );
}

#[test]
fn batch_registration_timeout_is_optional_and_above_zero() {
    let tail = r#"{"name": "t", "mode": "batch", "job": {"vertices": [{"id": "src", "operator": "source", "parallelism": 1, "records": 10}], "edges": []}, "batch": "#;
    let parse = |batch: &str| super::parse(&format!("{tail}{batch}}}"), "t.json");
    let absent = parse("{}").expect("valid");
    assert_eq!(absent.batch.expect("batch").registration_timeout, None);
    let set = parse(r#"{"registration_timeout": "40ms"}"#).expect("valid");
    assert_eq!(
        set.batch.expect("batch").registration_timeout,
        Some(sim::Duration::from_millis(40))
    );
    let zero = parse(r#"{"registration_timeout": "0ms"}"#).expect_err("refused");
    assert!(
        zero.to_string().contains("batch.registration_timeout"),
        "{zero}"
    );
}

#[test]
fn batch_job_result_delay_defaults_to_a_millisecond() {
    let tail = r#"{"name": "t", "mode": "batch", "job": {"vertices": [{"id": "src", "operator": "source", "parallelism": 1, "records": 10}], "edges": []}, "batch": "#;
    let parse = |batch: &str| super::parse(&format!("{tail}{batch}}}"), "t.json");
    let delay = |batch: &str| {
        parse(batch)
            .expect("valid")
            .batch
            .expect("batch")
            .job_result_delay
    };
    assert_eq!(delay("{}"), sim::Duration::from_millis(1));
    assert_eq!(delay(r#"{"job_result_delay": "0ms"}"#), sim::Duration::ZERO);
    assert_eq!(
        delay(r#"{"job_result_delay": "25ms"}"#),
        sim::Duration::from_millis(25)
    );
    let wrong = parse(r#"{"job_result_delay": 5}"#).expect_err("refused");
    assert!(
        wrong.to_string().contains("batch.job_result_delay"),
        "{wrong}"
    );
}

#[test]
fn batch_speculation_is_checked_field_by_field() {
    let head = r#"{"name": "t", "mode": "batch", "job": {"vertices": [{"id": "src", "operator": "source", "parallelism": 1, "records": 10}], "edges": []}, "cluster": {"task_managers": 2}, "#;
    let parse = |rest: &str| super::parse(&format!("{head}{rest}}}"), "t.json");
    let on =
        parse(r#""batch": {"speculative": {}, "slow_task_managers": {"1": 10}}"#).expect("valid");
    let batch = on.batch.expect("batch");
    let spec = batch.speculative.expect("on");
    assert_eq!(spec.check_interval, sim::Duration::from_millis(1));
    assert_eq!(spec.baseline_ratio, 0.75);
    assert_eq!(spec.baseline_multiplier, 1.5);
    assert_eq!(batch.slowdown, [1.0, 10.0]);
    let off = parse(r#""batch": {}"#).expect("valid");
    assert_eq!(off.batch.expect("batch").speculative, None);
    for (rest, path, words) in [
        (
            r#""batch": {"speculative": {"baseline_ratio": 1}}"#,
            "batch.speculative.baseline_ratio",
            "must be in [0, 1)",
        ),
        (
            r#""batch": {"speculative": {"max_concurrent_executions": 3}}"#,
            "batch.speculative.max_concurrent_executions",
            "must be 2",
        ),
        (
            r#""batch": {"speculative": {"check_interval": "0ms"}}"#,
            "batch.speculative.check_interval",
            "longer than 0",
        ),
        (
            r#""batch": {"slow_task_managers": {"2": 10}}"#,
            "batch.slow_task_managers.2",
            "there is no TaskManager 2",
        ),
        (
            r#""batch": {"slow_task_managers": {"0": 0.5}}"#,
            "batch.slow_task_managers.0",
            "from 1 (normal speed)",
        ),
        (
            r#""batch": {"slow_task_managers": {"x": 2}}"#,
            "batch.slow_task_managers.x",
            "a TaskManager number",
        ),
        (
            r#""batch": {"speculative": {}}, "jobmaster": {"failover": "reconcile"}"#,
            "batch.speculative",
            "not modelled",
        ),
    ] {
        let err = parse(rest).expect_err(rest).to_string();
        assert!(err.contains(path) && err.contains(words), "{rest}: {err}");
    }
}

#[test]
fn a_batch_coordinator_may_sit_on_any_vertex_but_only_a_source_has_splits() {
    let head = r#"{"name": "t", "mode": "batch", "job": {"vertices": [{"id": "src", "operator": "source", "parallelism": 2, "records": 10}, {"id": "map", "operator": "map", "parallelism": 2}], "edges": [{"from": "src", "to": "map", "pattern": "forward"}]}, "batch": {"coordinators": "#;
    let parse = |c: &str| super::parse(&format!("{head}{c}}}}}"), "t.json");
    let ok = parse(r#"{"map": {"supports_batch_snapshot": false}}"#).expect("valid");
    let coordinators = ok.batch.expect("batch").coordinators;
    assert_eq!(coordinators[0].map(|c| c.splits), Some(8));
    let map = coordinators[1].expect("map has one");
    assert_eq!((map.splits, map.supports_batch_snapshot), (0, false));
    let splits = parse(r#"{"map": {"splits": 3}}"#).expect_err("refused");
    assert!(
        splits.to_string().contains("batch.coordinators.map.splits"),
        "{splits}"
    );
    let unknown = parse(r#"{"nope": {}}"#).expect_err("refused");
    assert!(
        unknown.to_string().contains("\"src\", \"map\""),
        "{unknown}"
    );
}

/// `network.channels`: a latency of its own for named channels, refused where no channel runs,
/// twice for one channel, with a malformed subtask, or in a batch job.
#[test]
fn channel_latencies_name_channels_of_the_job() {
    let net = |channels: &str| with(&format!(r#""network": {{"channels": [{channels}]}}"#));
    let s = ok(&net(
        r#"{"from": "src[1]", "to": "sink[0]", "latency": "3ms"}"#,
    ));
    assert_eq!(
        s.network.channels,
        [ChannelLatency {
            from: SubtaskRef {
                vertex: 0,
                index: 1
            },
            to: SubtaskRef {
                vertex: 1,
                index: 0
            },
            latency: DurationRange::fixed(Duration::from_millis(3)),
        }]
    );
    reject(
        &net(r#"{"from": "sink[0]", "to": "src[0]", "latency": "3ms"}"#),
        "network.channels[0]",
        "no channel runs from sink[0] to src[0]",
    );
    reject(
        &net(r#"{"from": "src[2]", "to": "sink[0]", "latency": "3ms"}"#),
        "network.channels[0].from",
        "has parallelism 2",
    );
    reject(
        &net(r#"{"from": "src[0]", "to": "snk[0]", "latency": "3ms"}"#),
        "network.channels[0].to",
        "unknown vertex \"snk\"",
    );
    reject(
        &net(r#"{"from": "src[0]", "to": "sink[0]", "latency": "3ms"},
               {"from": "src[0]", "to": "sink[0]", "latency": "1ms"}"#),
        "network.channels[1]",
        "listed twice: network.channels[0]",
    );
    reject(
        &net(r#"{"from": "src[0]", "to": "sink[0]", "latency": "soon"}"#),
        "network.channels[0].latency",
        "",
    );
}

/// `trigger_task` names a subtask, needs checkpointing, and is refused in a batch job, which
/// takes no checkpoints.
#[test]
fn trigger_task_needs_a_subtask_and_checkpointing() {
    let fault = |f: &str| format!(r#""faults": [{{"at": "1ms", "fault": "trigger_task"{f}}}]"#);
    let checkpointed = |f: &str| with(&format!(r#""checkpointing": {{}}, {}"#, fault(f)));
    let s = ok(&checkpointed(r#", "task": "sink[0]""#));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::TriggerTask {
            task: SubtaskRef {
                vertex: 1,
                index: 0
            },
            checkpoint: None,
        }
    );
    reject(&checkpointed(""), "faults[0]", "the subtask to trigger");
    reject(
        &checkpointed(r#", "task": "sink[1]""#),
        "faults[0].task",
        "has parallelism 1",
    );
    reject(
        &checkpointed(r#", "task": "sink[0]", "task_manager": 0"#),
        "faults[0].task_manager",
        "",
    );
    reject(
        &with(&fault(r#", "task": "sink[0]""#)),
        "faults[0].fault",
        "needs a `checkpointing` block",
    );
    reject(
        &format!(
            r#"{{"name": "t", "mode": "batch", "job": {{"vertices": [
            {{"id": "src", "operator": "source", "parallelism": 1}}]}}, {}}}"#,
            fault(r#", "task": "src[0]""#)
        ),
        "faults[0].fault",
        "only applies to streaming jobs",
    );
}

/// F1.9: `fail_snapshot` names a subtask and a checkpoint from 1, takes a phase, needs no
/// trigger, and is refused without checkpointing or in a batch job; `trigger_task` takes a
/// checkpoint from 1; `tolerable_failures` is a count; `task_initialization` is streaming only.
#[test]
fn checkpoint_failure_fields_are_checked_at_their_json_paths() {
    let fault = |f: &str| format!(r#""faults": [{{"fault": "fail_snapshot"{f}}}]"#);
    let checkpointed = |f: &str| with(&format!(r#""checkpointing": {{}}, {}"#, fault(f)));
    let s = ok(&checkpointed(
        r#", "task": "sink[0]", "checkpoint": 2, "phase": "async""#,
    ));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::FailSnapshot {
            task: SubtaskRef {
                vertex: 1,
                index: 0
            },
            checkpoint: 2,
            phase: crate::scenario::SnapshotPhase::Async,
        }
    );
    assert_eq!(s.faults[0].trigger, FaultTrigger::At(Duration::ZERO));
    reject(
        &checkpointed(r#", "task": "sink[0]""#),
        "faults[0]",
        "missing field `checkpoint`",
    );
    reject(
        &checkpointed(r#", "task": "sink[0]", "checkpoint": 0"#),
        "faults[0].checkpoint",
        "at least 1",
    );
    reject(
        &checkpointed(r#", "task": "sink[0]", "checkpoint": 1, "phase": "later""#),
        "faults[0].phase",
        "sync",
    );
    reject(
        &with(&fault(r#", "task": "sink[0]", "checkpoint": 1"#)),
        "faults[0].fault",
        "needs a `checkpointing` block",
    );
    reject(
        &with(
            r#""checkpointing": {}, "faults": [{"at": "1ms", "fault": "fail_task", "task": "sink[0]", "checkpoint": 1}]"#,
        ),
        "faults[0].checkpoint",
        "only applies to trigger_task and fail_snapshot faults",
    );
    reject(
        &with(
            r#""checkpointing": {}, "faults": [{"at": "1ms", "fault": "trigger_task", "task": "sink[0]", "checkpoint": 0}]"#,
        ),
        "faults[0].checkpoint",
        "at least 1",
    );
    reject(
        &with(r#""checkpointing": {"tolerable_failures": "two"}"#),
        "checkpointing.tolerable_failures",
        "",
    );
    reject(
        &with(r#""checkpointing": {"tolerable_failures": -1}"#),
        "checkpointing.tolerable_failures",
        "",
    );
    reject(
        &with(r#""checkpointing": {"cancel_markers": "yes"}"#),
        "checkpointing.cancel_markers",
        "",
    );
    let s = ok(&with(r#""checkpointing": {"tolerable_failures": 3}"#));
    assert_eq!(s.checkpointing.expect("on").tolerable_failures, Some(3));
    reject(
        &with(r#""cluster": {"task_initialization": "soon"}"#),
        "cluster.task_initialization",
        "",
    );
}

/// `hold_channel` names a channel an edge makes and exactly one release, an instant after its
/// `at` and within the budget, or a predicate checked at `release_when`; streaming only.
#[test]
fn hold_channel_fields_are_checked_at_their_json_paths() {
    let hold = |f: &str| with(&format!(r#""faults": [{{"fault": "hold_channel"{f}}}]"#));
    let s = ok(&hold(
        r#", "at": "1ms", "from": "src[1]", "to": "sink[0]", "release_at": "5ms""#,
    ));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::HoldChannel {
            from: SubtaskRef {
                vertex: 0,
                index: 1
            },
            to: SubtaskRef {
                vertex: 1,
                index: 0
            },
            release: crate::scenario::Release::At(Duration::from_millis(5)),
        }
    );
    let s = ok(&hold(
        r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_when": {"finished": "src[1]"}"#,
    ));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::HoldChannel {
            from: SubtaskRef {
                vertex: 0,
                index: 0
            },
            to: SubtaskRef {
                vertex: 1,
                index: 0
            },
            release: crate::scenario::Release::When(Predicate::Finished(SubtaskRef {
                vertex: 0,
                index: 1
            })),
        }
    );
    reject(
        &hold(r#", "at": "1ms", "to": "sink[0]", "release_at": "5ms""#),
        "faults[0]",
        "missing field `from`",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "src[2]", "to": "sink[0]", "release_at": "5ms""#),
        "faults[0].from",
        "parallelism",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "sink[0]", "to": "src[0]", "release_at": "5ms""#),
        "faults[0]",
        "no channel runs from sink[0] to src[0]",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "src[0]", "to": "sink[0]""#),
        "faults[0]",
        "missing field `release_at`",
    );
    reject(
        &hold(
            r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_at": "5ms", "release_when": {"finished": "src[1]"}"#,
        ),
        "faults[0]",
        "has both `release_at` and `release_when`",
    );
    reject(
        &hold(r#", "at": "5ms", "from": "src[0]", "to": "sink[0]", "release_at": "5ms""#),
        "faults[0].release_at",
        "does not come after the hold's `at`",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_at": "4000s""#),
        "faults[0].release_at",
        "after budget.max_time",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_at": "1ms..2ms""#),
        "faults[0].release_at",
        "",
    );
    reject(
        &hold(
            r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_when": {"finished": "nope[0]"}"#,
        ),
        "faults[0].release_when.finished",
        "nope",
    );
    reject(
        &hold(
            r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_when": {"checkpoint_pending": 1}"#,
        ),
        "faults[0].release_when.checkpoint_pending",
        "checkpointing is disabled",
    );
    reject(
        &hold(r#", "at": "1ms", "from": "src[0]", "to": "sink[0]", "release_when": {}"#),
        "faults[0].release_when",
        "has no predicate",
    );
    reject(
        &with(
            r#""faults": [{"at": "1ms", "fault": "fail_task", "task": "sink[0]", "release_at": "2ms"}]"#,
        ),
        "faults[0].release_at",
        "only applies to hold_channel faults",
    );
    reject(
        r#"{"name": "t", "mode": "batch", "job": {"vertices": [
            {"id": "src", "operator": "source", "parallelism": 1}]}, "faults": [{"at": "1ms",
            "fault": "hold_channel", "from": "src[0]", "to": "src[0]", "release_at": "2ms"}]}"#,
        "faults[0].fault",
        "only applies to streaming jobs",
    );
}

/// Operator chains (F1.12): `operator` or `chain`, each member's fields in the member, a source
/// only at the head, a sink only at the end, one keyed sum not behind a source, unique uids;
/// every problem at its JSON path.
#[test]
fn chains_are_checked_at_their_json_paths() {
    let s = ok(&graph(
        r#"{"id": "s", "chain": [{"operator": "source", "records": 5}, "map"], "parallelism": 2},
           {"id": "k", "chain": ["map", {"operator": "keyed_sum", "keys": 4, "uid": "sum"}, "sink"], "parallelism": 1}"#,
        r#"{"from": "s", "to": "k", "pattern": "all_to_all"}"#,
    ));
    let k = &s.job.vertices[1].chain;
    assert_eq!(k.describe(), "map -> keyed_sum -> sink");
    let uids: Vec<&str> = k.members().iter().map(|m| m.uid.as_str()).collect();
    assert_eq!(uids, ["k.0", "sum", "k.2"]);
    assert_eq!(k.keys(), Some(4));
    assert_eq!(k.sink(), Some(Delivery::AtLeastOnce));
    assert!(s.job.vertices[0].chain.is_source());
    assert_eq!(s.job.vertices[0].chain.members()[0].uid, "s.0");
    let source = r#"{"id": "s", "operator": "source", "parallelism": 1}"#;
    let edge = r#"{"from": "s", "to": "x", "pattern": "all_to_all"}"#;
    let cases = [
        (r#""parallelism": 1"#, "job.vertices[1]", "needs `operator`"),
        (
            r#""operator": "map", "chain": ["map"], "parallelism": 1"#,
            "job.vertices[1].chain",
            "not both",
        ),
        (
            r#""chain": [], "parallelism": 1"#,
            "job.vertices[1].chain",
            "1 to 8",
        ),
        (
            r#""chain": ["map", "map", "map", "map", "map", "map", "map", "map", "map"], "parallelism": 1"#,
            "job.vertices[1].chain",
            "not 9",
        ),
        (
            r#""chain": ["map", "source"], "parallelism": 1"#,
            "job.vertices[1].chain[1].operator",
            "can only head a chain",
        ),
        (
            r#""chain": ["sink", "map"], "parallelism": 1"#,
            "job.vertices[1].chain[0].operator",
            "can only end a chain",
        ),
        (
            r#""chain": ["keyed_sum", "keyed_sum"], "parallelism": 1"#,
            "job.vertices[1].chain[1].operator",
            "already a keyed_sum",
        ),
        (
            r#""chain": ["map", {"operator": "map", "keys": 3}], "parallelism": 1"#,
            "job.vertices[1].chain[1].keys",
            "only applies to keyed_sum operators",
        ),
        (
            r#""chain": ["map", {"operator": "sink", "uid": " "}], "parallelism": 1"#,
            "job.vertices[1].chain[1].uid",
            "must not be empty",
        ),
        (
            r#""chain": ["map", {"operator": "sink", "uid": "s"}], "parallelism": 1"#,
            "job.vertices[1].chain[1].uid",
            "already used at job.vertices[0].id",
        ),
        (
            r#""chain": ["map", {"operator": "sink", "colour": 1}], "parallelism": 1"#,
            "job.vertices[1].chain[1].colour",
            "unknown field `colour`",
        ),
        (
            r#""chain": ["map", "filter"], "parallelism": 1"#,
            "job.vertices[1].chain[1]",
            "unknown variant `filter`",
        ),
        (
            r#""chain": ["map", {"operator": "sink"}], "delivery": "at_least_once", "parallelism": 1"#,
            "job.vertices[1].delivery",
            "belongs to the chain member",
        ),
    ];
    for (fields, path, phrase) in cases {
        let text = graph(&format!(r#"{source}, {{"id": "x", {fields}}}"#), edge);
        reject(&text, path, phrase);
    }
    reject(
        &graph(
            r#"{"id": "s", "chain": ["source", "keyed_sum"], "parallelism": 1}"#,
            "",
        ),
        "job.vertices[0].chain[1].operator",
        "behind a source",
    );
    // A keyed sum's vertex takes keyed input, wherever the sum sits in the chain.
    reject(
        &graph(
            &format!(r#"{source}, {{"id": "x", "chain": ["map", "keyed_sum"], "parallelism": 1}}"#),
            r#"{"from": "s", "to": "x", "pattern": "forward"}"#,
        ),
        "job.edges[0].pattern",
        "keyed_sum",
    );
    reject(
        &format!(
            r#"{{"name": "t", "mode": "batch", "job": {{"vertices": [{source}, {{"id": "x", "chain": ["map", "sink"], "parallelism": 1}}], "edges": [{edge}]}}}}"#
        ),
        "job.vertices[1].chain",
        "streaming jobs only",
    );
}

/// `restore_from` (F1.6): each value is checked at its JSON path; what a restore then refuses
/// is the JobMaster's to decide at the job's start, so an awkward shape still validates.
#[test]
fn restore_from_is_checked_at_its_json_paths() {
    let job = r#"{"vertices": [
        {"id": "src", "operator": "source", "parallelism": 2},
        {"id": "sum", "operator": "keyed_sum", "parallelism": 2},
        {"id": "sink", "operator": "sink", "parallelism": 1, "delivery": "two_phase_commit"}],
      "edges": [{"from": "src", "to": "sum", "pattern": "all_to_all"},
                {"from": "sum", "to": "sink", "pattern": "all_to_all"}]}"#;
    let with_restore = |restore: &str| {
        format!(
            r#"{{"name": "t", "mode": "streaming", "job": {job}, "checkpointing": {{}}, "restore_from": {restore}}}"#
        )
    };
    let s = ok(&with_restore(
        r#"{"checkpoint": 5, "operators": {
            "src": {"parallelism": 2, "finished": [true, false], "state": [null, {"offset": 7}]},
            "sum": {"parallelism": 4, "state": [{"sums": [[3, 10], [1, 2]]}, null, null, null]},
            "sink": {"parallelism": 1, "finished": true,
                     "state": [{"pending": [{"checkpoint": 5, "records": [["sum[1]", 3, 3, 10]]}]}]}}}"#,
    ));
    let restore = s.restore_from.expect("restore_from");
    assert_eq!(restore.checkpoint, 5);
    assert_eq!(restore.operators["src"].finished, [true, false]);
    assert_eq!(
        restore.operators["sum"].state[0],
        RestoredState::KeyedSum {
            sums: vec![(1, 2), (3, 10)]
        }
    );
    assert!(restore.operators["sink"].fully_finished());
    let cases = [
        (
            r#"{"checkpoint": 0}"#,
            "restore_from.checkpoint",
            "start at 1",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2, "finished": "yes"}}}"#,
            "restore_from.operators.src.finished",
            "true or false for every subtask",
        ),
        (
            r#"{"operators": {}}"#,
            "restore_from",
            "missing field `checkpoint`",
        ),
        (
            r#"{"checkpoint": 1, "extra": 1}"#,
            "restore_from.extra",
            "unknown field",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 0}}}"#,
            "restore_from.operators.src.parallelism",
            "1 to",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2, "finished": [true]}}}"#,
            "restore_from.operators.src.finished",
            "lists 1 subtasks",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2, "state": [null]}}}"#,
            "restore_from.operators.src.state",
            "lists 1 subtasks",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2, "state": [{"sums": []}, null]}}}"#,
            "restore_from.operators.src.state[0]",
            "does not fit the operator",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2, "state": [{"offset": 1, "sums": []}, null]}}}"#,
            "restore_from.operators.src.state[0]",
            "exactly one of",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"sum": {"parallelism": 2, "state": [{"sums": [[1, 1], [1, 2]]}, null]}}}"#,
            "restore_from.operators.sum.state[0].sums",
            "listed twice",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 3, "state": [null, null, {"offset": 1}]}}}"#,
            "restore_from.operators.src.parallelism",
            "must stay",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"gone": {"parallelism": 1, "state": [{"offset": 1}]}}}"#,
            "restore_from.operators.gone",
            "not available in the new program",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"sink": {"parallelism": 1, "state": [{"pending": [{"checkpoint": 1, "records": [["nope[0]", 1, 1, 1]]}]}]}}}"#,
            "restore_from.operators.sink.state[0].pending[0].records[0]",
            "unknown vertex",
        ),
        (
            r#"{"checkpoint": 1, "operators": {"src": {"parallelism": 2}, "src": {"parallelism": 2}}}"#,
            "restore_from.operators",
            "listed twice",
        ),
        (r#"7"#, "restore_from", "a checkpoint"),
        (
            r#""no/such/file.json""#,
            "restore_from",
            "cannot read the checkpoint file",
        ),
    ];
    for (restore, path, phrase) in cases {
        reject(&with_restore(restore), path, phrase);
    }
    // Dropped, not refused: state of an operator the job no longer has, when allowed or empty.
    ok(&with_restore(
        r#"{"checkpoint": 1, "allow_non_restored_state": true, "operators": {"gone": {"parallelism": 1, "state": [{"offset": 1}]}}}"#,
    ));
    ok(&with_restore(
        r#"{"checkpoint": 1, "operators": {"gone": {"parallelism": 1, "finished": true}}}"#,
    ));
    reject(
        r#"{"name": "t", "mode": "batch", "job": {"vertices": [{"id": "s", "operator": "source", "parallelism": 1}, {"id": "k", "operator": "sink", "parallelism": 1}], "edges": [{"from": "s", "to": "k", "pattern": "all_to_all"}]}, "restore_from": {"checkpoint": 1}}"#,
        "restore_from",
        "batch job",
    );
}

/// `stop_with_savepoint` (F1.11) takes `drain` (a boolean, default false) and runs only where
/// the model follows Flink: a `checkpointing` block, `flink`, aligned barriers without a
/// timeout, a streaming job. Every refusal names its JSON path and says why.
#[test]
fn stop_with_savepoint_fields_are_checked_at_their_json_paths() {
    let stop = |checkpointing: &str, fault: &str| {
        with(&format!(
            r#""checkpointing": {{"interval": "5ms"{checkpointing}}}, "faults": [{{"at": "1ms", "fault": "stop_with_savepoint"{fault}}}]"#
        ))
    };
    let s = ok(&stop("", ""));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::StopWithSavepoint { drain: false }
    );
    let s = ok(&stop(
        r#", "finish_protocol": "flink""#,
        r#", "drain": true"#,
    ));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::StopWithSavepoint { drain: true }
    );
    let s = ok(&with(
        r#""checkpointing": {"interval": "5ms"}, "faults": [{"when": {"checkpoint_pending": 2}, "fault": "stop_with_savepoint"}]"#,
    ));
    assert_eq!(
        s.faults[0].trigger,
        crate::scenario::FaultTrigger::When(Predicate::CheckpointPending(2))
    );
    reject(&stop("", r#", "drain": "yes""#), "faults[0].drain", "");
    reject(&stop("", r#", "drain": 1"#), "faults[0].drain", "");
    // `null` reads as absent, as for every optional field: no drain.
    let s = ok(&stop("", r#", "drain": null"#));
    assert_eq!(
        s.faults[0].kind,
        FaultKind::StopWithSavepoint { drain: false }
    );
    reject(
        &stop("", r#", "task": "src[0]""#),
        "faults[0].task",
        "only applies to fail_task",
    );
    reject(
        &with(
            r#""faults": [{"at": "1ms", "fault": "fail_task", "task": "src[0]", "drain": true}]"#,
        ),
        "faults[0].drain",
        "only applies to stop_with_savepoint faults",
    );
    reject(
        &with(r#""faults": [{"at": "1ms", "fault": "stop_with_savepoint"}]"#),
        "faults[0].fault",
        "needs a `checkpointing` block",
    );
    for protocol in ["option1", "option2", "legacy"] {
        reject(
            &stop(&format!(r#", "finish_protocol": "{protocol}""#), ""),
            "faults[0].fault",
            "needs checkpointing.finish_protocol \"flink\"",
        );
    }
    reject(
        &stop(r#", "mode": "unaligned""#, ""),
        "faults[0].fault",
        "cannot be combined with checkpointing.mode \"unaligned\": Flink always aligns",
    );
    reject(
        &stop(r#", "mode": "at_least_once""#, ""),
        "faults[0].fault",
        "cannot be combined with checkpointing.mode \"at_least_once\"",
    );
    reject(
        &stop(r#", "alignment_timeout": "1ms""#, ""),
        "faults[0].fault",
        "cannot be combined with an alignment_timeout",
    );
    reject(&stop("", r#", "at": "2ms""#), "faults[0]", "");
    reject(
        r#"{"name": "t", "mode": "batch", "job": {"vertices": [
            {"id": "src", "operator": "source", "parallelism": 1}]}, "faults": [{"at": "1ms",
            "fault": "stop_with_savepoint"}]}"#,
        "faults[0].fault",
        "only applies to streaming jobs",
    );
}

/// F1.13: the streaming `coordinators` block gives a source splits, and refuses what it cannot
/// mean or what is not modelled yet, at the field.
#[test]
fn streaming_coordinators_give_a_source_splits() {
    let s = ok(&with(r#""coordinators": {"src": {"splits": 5}}"#));
    assert_eq!(s.job.vertices[0].splits, Some(5));
    assert_eq!(s.job.vertices[1].splits, None);
    reject(
        &with(r#""coordinators": {"nope": {"splits": 5}}"#),
        "coordinators.nope",
        r#"unknown vertex "nope""#,
    );
    reject(
        &with(r#""coordinators": {"sink": {"splits": 5}}"#),
        "coordinators.sink.splits",
        "only a source's coordinator assigns splits",
    );
    reject(
        &with(r#""coordinators": {"src": {"splits": 0}}"#),
        "coordinators.src.splits",
        "between 1 and 1000000",
    );
    reject(
        &with(r#""coordinators": {"src": {}}"#),
        "coordinators.src",
        "missing field `splits`",
    );
    let per_subtask = graph(
        r#"{"id": "src", "operator": "source", "parallelism": 2, "records": [1, 2]},
           {"id": "sink", "operator": "sink", "parallelism": 1}"#,
        r#"{"from": "src", "to": "sink", "pattern": "all_to_all"}"#,
    );
    // The document's closing brace, then the block.
    let per_subtask = per_subtask.trim_end().strip_suffix('}').unwrap().to_owned()
        + r#", "coordinators": {"src": {"splits": 3}}}"#;
    reject(
        &per_subtask,
        "job.vertices[0].records",
        "the records of each split",
    );
    reject(
        &with(r#""coordinators": {"src": {"splits": 2}}, "jobmaster": {"failover": "reconcile"}"#),
        "coordinators.src",
        "not implemented yet",
    );
}
