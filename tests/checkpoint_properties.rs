//! Properties of checkpointing while tasks finish (`docs/rules.md` P1, F1).
//!
//! A random small job graph (2–8 vertices, parallelism 1–4, 0–300 records per source subtask
//! with very different lengths and paces, so subtasks finish at very different times) gets a
//! random `checkpointing` block (periodic `interval` 1–30ms or an explicit `trigger_at` list,
//! `max_concurrent` 1–3, a random finish protocol, a random mode: aligned, unaligned, aligned
//! with an alignment timeout or at least once (F1.7), with or without `flush_before_finish` and
//! cancellation markers (F1.10)), random channel/RPC latency ranges, channel
//! capacity 1–8, random tie-break, and sinks that are `at_least_once` or `two_phase_commit`.
//!
//! - `option1`, `option2`, `flink`: the job FINISHES, with no violation at all (every checkpoint
//!   completes or is aborted for a reason its protocol allows, every completed checkpoint is a
//!   consistent cut, two-phase-commit sinks commit every record exactly once: P1.6, P1.7, F1.5),
//!   and the run is deterministic.
//! - `legacy`: see [`legacy_finishes_and_loses_only_the_last_transactions`].
//!
//! - a failed snapshot (F1.9): see [`a_failed_snapshot_keeps_every_guarantee`].
//! - network buffers (F1.14): see [`jobs_in_network_buffers_keep_every_guarantee`].
//!
//! `PROPTEST_CASES` overrides the number of cases of each property.

use flinksim::oracle::invariant::Invariant;
mod common;

use common::{cases, describe, graph, middle, run_doc, sink, source};
use flinksim::status::JobStatus;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn needs_final_checkpoint(protocol: &str, vertices: &[Value]) -> bool {
    protocol == "flink"
        || (protocol != "legacy"
            && vertices
                .iter()
                .any(|v| v["delivery"] == json!("two_phase_commit")))
}

/// A whole scenario with a `checkpointing` block using `protocol` (one of `protocols`).
fn scenario_doc(protocols: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let shape = (
        prop::collection::vec(source(5, 300), 1..3),
        prop::collection::vec(middle(5), 0..5),
        prop::collection::vec(sink(5), 1..3),
    )
        .prop_map(|(sources, mut middles, sinks)| {
            // At most 8 vertices.
            middles.truncate(8 - sources.len() - sinks.len());
            (sources, middles, sinks)
        });
    let network = (
        (0u64..200, 0u64..1000), // channel latency µs: min, extra
        (1u64..500, 0u64..3000), // rpc latency µs: min, extra
        1u32..9,                 // channel capacity
        any::<bool>(),           // shuffled tie-break
    );
    let checkpointing = (
        prop_oneof![
            // Periodic.
            (1u64..=30).prop_map(|ms| (Some(ms * 1000), Vec::<u64>::new())),
            // Periodic with sub-millisecond jitter plus explicit triggers.
            (
                (1000u64..30_000),
                prop::collection::vec(0u64..100_000, 0..4)
            )
                .prop_map(|(us, at)| (Some(us), at)),
            // Explicit triggers only (µs since start).
            prop::collection::vec(0u64..120_000, 1..8).prop_map(|at| (None, at)),
        ],
        1u32..4,
        0usize..protocols.len(),
        // Checkpoint mode (P1.4, F1.7): aligned, unaligned, aligned with an alignment timeout
        // (µs), or at least once; and P1.5's flush_before_finish.
        (0u8..4, 0u64..3000, any::<bool>()),
    );
    (shape, network, checkpointing, any::<u64>()).prop_map(
        move |(
            (sources, middles, sinks),
            (cl, rl, capacity, shuffled),
            ((interval, at), max_concurrent, p, (mode, alignment_timeout, flush)),
            seed,
        )| {
            let protocol = protocols[p];
            let (vertices, edges) = graph(&sources, &middles, &sinks, true);
            let at: BTreeSet<u64> = at.into_iter().collect();
            let mut interval = interval;
            if interval.is_none() && needs_final_checkpoint(protocol, &vertices) {
                // P1.7 / F1.5 step 3: a task that needs a checkpoint covering its final state
                // cannot finish when no checkpoint is triggered after its end of input. With
                // only a finite `trigger_at` list that is a legitimate stall, not a bug, so
                // such configurations also get a periodic trigger.
                interval = Some(30_000);
            }
            json!({
                "name": "generated-checkpointing",
                "seed": seed,
                "mode": "streaming",
                "job": {"vertices": vertices, "edges": edges},
                "network": {
                    "channel_latency": format!("{}us..{}us", cl.0, cl.0 + cl.1),
                    "rpc_latency": format!("{}us..{}us", rl.0, rl.0 + rl.1),
                    "channel_capacity": capacity,
                },
                "checkpointing": {
                    "interval": interval.map(|us| format!("{us}us")),
                    "trigger_at": at.iter().map(|us| format!("{us}us")).collect::<Vec<_>>(),
                    "timeout": "2s",
                    "max_concurrent": max_concurrent,
                    "finish_protocol": protocol,
                    "mode": match mode {
                        1 => "unaligned",
                        3 => "at_least_once",
                        _ => "aligned",
                    },
                    "alignment_timeout": (mode == 2).then(|| format!("{alignment_timeout}us")),
                    "flush_before_finish": flush,
                },
                "budget": {"max_events": 3_000_000, "max_time": "30s"},
                "tie_break": if shuffled { "shuffled" } else { "insertion" },
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(192), failure_persistence: None, .. ProptestConfig::default() })]

    /// FLIP-147 protocols (P1.2 option1, option2; F1 flink): every job finishes, every record
    /// reaches every sink exactly once (two-phase-commit sinks: committed), every checkpoint
    /// completes or is aborted for an allowed reason, every completed checkpoint is a
    /// consistent cut, and the run is deterministic.
    #[test]
    fn checkpoints_after_tasks_finish_keep_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        markers in any::<bool>(),
    ) {
        let mut doc = doc;
        // F1.10: with or without cancellation markers.
        doc["checkpointing"]["cancel_markers"] = json!(markers);
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, .. ProptestConfig::default() })]

    /// `legacy` (before FLIP-147). The expectation, from P1.2 legacy, P1.6 and P1.7:
    /// - the job still FINISHES: nothing waits for a checkpoint (P1.6 legacy: finishing declines
    ///   pending checkpoints, and no task waits for a final one);
    /// - checkpoints are aborted by finishing tasks (`task-finishing`, `input-end-of-stream`) or
    ///   missed triggers; `checkpoint-progress` allows those for legacy, but never an expiry;
    /// - every completed checkpoint is still a consistent cut;
    /// - at-least-once sinks lose nothing: they receive exactly what a run without
    ///   checkpointing delivers;
    /// - two-phase-commit sinks *do* lose their last transactions (P1.7: "in the legacy variant
    ///   that checkpoint never comes and the last transaction is never committed"), so the only
    ///   allowed violation is `exactly-once-output` of the "never committed" kind on a
    ///   two-phase-commit sink: never a duplicate, never a record a failure-free run does not
    ///   produce. Such a sink commits at most what a run without checkpointing delivers.
    #[test]
    fn legacy_finishes_and_loses_only_the_last_transactions(
        doc in scenario_doc(&["legacy"]),
        markers in any::<bool>(),
    ) {
        let mut doc = doc;
        // F1.10: EndOfPartition aborts alignments here, the commonest origin of a marker.
        doc["checkpointing"]["cancel_markers"] = json!(markers);
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        let tpc: BTreeSet<String> = doc["job"]["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["delivery"] == json!("two_phase_commit"))
            .map(|v| v["id"].as_str().unwrap().to_owned())
            .collect();
        for v in &report.violations {
            let allowed = v.invariant == Invariant::ExactlyOnceOutput
                && v.message.contains("never committed")
                && v.actors.iter().all(|a| tpc.contains(a));
            prop_assert!(allowed, "{}\n{}", describe(&report), text);
        }
        // Baseline: the same job without checkpointing, every sink at-least-once.
        let mut baseline = doc.clone();
        baseline.as_object_mut().unwrap().remove("checkpointing");
        for v in baseline["job"]["vertices"].as_array_mut().unwrap() {
            if v["operator"] == json!("sink") {
                v["delivery"] = json!("at_least_once");
            }
        }
        let base = run_doc(&baseline.to_string());
        prop_assert_eq!(base.status, JobStatus::Finished, "baseline: {}", describe(&base));
        for ((name, got), (_, want)) in report.sinks.iter().zip(&base.sinks) {
            if tpc.contains(name) {
                prop_assert!(got <= want, "sink {} committed {} > {}\n{}", name, got, want, text);
            } else {
                prop_assert_eq!(got, want, "sink {}\n{}", name, text);
            }
        }
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, .. ProptestConfig::default() })]

    /// F1.9: the same jobs (FLIP-147 protocols) with one snapshot that fails, in its
    /// synchronous part (the task fails) or its asynchronous part (the task declines), with
    /// asynchronous parts of up to 2 ms and a `tolerable_failures` limit of 0 to 2 or none.
    /// Whatever the failure leads to (a region failover, a decline, a global failover when it
    /// is one too many), the job still FINISHES with no violation at all, and the run is
    /// deterministic.
    #[test]
    fn a_failed_snapshot_keeps_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        limit in prop::option::of(0u32..=2),
        sync in any::<bool>(),
        checkpoint in 1u64..=4,
        pick in any::<prop::sample::Index>(),
    ) {
        let mut doc = doc;
        let vertices = doc["job"]["vertices"].as_array().unwrap().clone();
        let vertex = pick.get(&vertices);
        let task = format!("{}[0]", vertex["id"].as_str().unwrap());
        doc["checkpointing"]["tolerable_failures"] = json!(limit);
        doc["checkpointing"]["async_duration"] = json!("0us..2000us");
        doc["faults"] = json!([{"fault": "fail_snapshot", "task": task, "checkpoint": checkpoint,
            "phase": if sync { "sync" } else { "async" }}]);
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, .. ProptestConfig::default() })]

    /// The same jobs with one channel held for up to 20 ms (`hold_channel`, from an instant or
    /// from a checkpoint's trigger): whatever waits on the held wire (records, a barrier,
    /// EndOfData, EndOfPartition, a cancellation marker) and whatever that delays (alignments,
    /// expiries, back-pressure), the job still FINISHES with no violation at all, and the run is
    /// deterministic.
    #[test]
    fn a_held_channel_keeps_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        markers in any::<bool>(),
        pick in any::<prop::sample::Index>(),
        (at_us, hold_us) in (0u64..50_000, 1u64..20_000),
        on_trigger in prop::option::of(1u64..=4),
    ) {
        let mut doc = doc;
        doc["checkpointing"]["cancel_markers"] = json!(markers);
        let edges = doc["job"]["edges"].as_array().unwrap().clone();
        let edge = pick.get(&edges);
        let end = |key: &str| format!("{}[0]", edge[key].as_str().unwrap());
        let mut hold = json!({"fault": "hold_channel", "from": end("from"), "to": end("to"),
            "release_at": format!("{}us", at_us + hold_us)});
        match on_trigger {
            Some(id) => hold["when"] = json!({"checkpoint_pending": id}),
            None => hold["at"] = json!(format!("{at_us}us")),
        }
        doc["faults"] = json!([hold]);
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }

    /// Operator chains (F1.12): maps chained behind sources and in front of any other operator
    /// (a mask draws which vertices), with or without a task failing midway, keep every
    /// guarantee: the job FINISHES with no violation (the reference applies each chain operator
    /// by operator), and the run is deterministic.
    #[test]
    fn chained_jobs_keep_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        mask in 1u8..,
        failure in prop::option::of((any::<prop::sample::Index>(), 1u64..40_000)),
    ) {
        let mut doc = doc;
        flinksim::fuzz::generate::chain_maps(
            doc["job"]["vertices"].as_array_mut().unwrap(),
            mask,
        );
        if let Some((pick, at_us)) = failure {
            let ids: Vec<String> = doc["job"]["vertices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| format!("{}[0]", v["id"].as_str().unwrap()))
                .collect();
            doc["faults"] = json!([{"at": format!("{at_us}us"), "fault": "fail_task",
                "task": pick.get(&ids)}]);
        }
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }

    /// F1.6: a job started from a checkpoint (sources resumed at drawn offsets, some subtasks
    /// finished, sometimes a vertex that is no source recorded fully finished, which Flink may
    /// refuse) keeps every guarantee: no violation (`restore-shape` judges whether it may
    /// start, `exactly-once-output` what it must output), a terminal status, the same run twice.
    #[test]
    fn a_job_started_from_a_checkpoint_keeps_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        draws in prop::collection::vec((any::<bool>(), 0u64..1000, 0u8..8), 32),
    ) {
        let mut doc = doc;
        let mut operators = serde_json::Map::new();
        let mut draw = draws.iter().cycle();
        for vertex in doc["job"]["vertices"].as_array().unwrap() {
            let id = vertex["id"].as_str().unwrap().to_owned();
            let p = vertex["parallelism"].as_u64().unwrap();
            if vertex["operator"] == json!("source") {
                let mut finished = Vec::new();
                let mut state = Vec::new();
                for i in 0..p as usize {
                    let records = vertex["records"][i].as_u64().unwrap();
                    let &(done, at, _) = draw.next().unwrap();
                    finished.push(done);
                    state.push(json!({"offset": if done { records } else { at % (records + 1) }}));
                }
                operators.insert(id, json!({"parallelism": p, "finished": finished, "state": state}));
            } else if draw.next().unwrap().2 == 0 {
                operators.insert(id, json!({"parallelism": p, "finished": true}));
            }
        }
        doc["restore_from"] = json!({"checkpoint": 7, "operators": operators});
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert!(report.status.is_terminal(), "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, .. ProptestConfig::default() })]

    /// F1.11: the same jobs under `flink`, aligned, stopped with a savepoint, drained or not,
    /// at an instant, at a checkpoint's trigger (racing the final checkpoints of tasks that
    /// ended their input) or when the first source subtask ends its input, sometimes twice
    /// (the second is refused or comes after a failed first) and sometimes with a task
    /// failing meanwhile (the savepoint fails and the job resumes). Whatever happens, the job
    /// FINISHES with no violation at all (a stopped job by what its sources emitted up to the
    /// stop), and the run is deterministic.
    #[test]
    fn a_stop_with_savepoint_keeps_every_guarantee(
        doc in scenario_doc(&["flink"]),
        drain in any::<bool>(),
        (at_us, kind, id) in (0u64..60_000, 0u8..3, 1u64..=3),
        second in prop::option::of((0u64..60_000, any::<bool>())),
        fail in prop::option::of((any::<prop::sample::Index>(), 0u64..60_000)),
    ) {
        let mut doc = doc;
        doc["checkpointing"]["mode"] = json!("aligned");
        doc["checkpointing"]["alignment_timeout"] = json!(null);
        let source = doc["job"]["vertices"][0]["id"].as_str().unwrap().to_owned();
        let mut stop = json!({"fault": "stop_with_savepoint", "drain": drain});
        match kind {
            0 => stop["at"] = json!(format!("{at_us}us")),
            1 => stop["when"] = json!({"checkpoint_pending": id}),
            _ => stop["when"] = json!({"end_of_input": format!("{source}[0]")}),
        }
        let mut faults = vec![stop];
        if let Some((us, drain)) = second {
            faults.push(json!({"at": format!("{us}us"), "fault": "stop_with_savepoint", "drain": drain}));
        }
        if let Some((pick, us)) = fail {
            let vertices = doc["job"]["vertices"].as_array().unwrap().clone();
            let task = format!("{}[0]", pick.get(&vertices)["id"].as_str().unwrap());
            faults.push(json!({"at": format!("{us}us"), "fault": "fail_task", "task": task}));
        }
        doc["faults"] = json!(faults);
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(96), failure_persistence: None, .. ProptestConfig::default() })]

    /// F1.14: the same jobs with records in network buffers (1 to 8 records a buffer, a buffer
    /// timeout from 0 to 3 ms, 1 to 3 exclusive buffers a channel and 0 to 4 floating ones a
    /// gate), with or without a task failing midway: whatever the buffers hold back or carry
    /// together, the job FINISHES with no violation at all (every oracle still judges
    /// records), and the run is deterministic.
    #[test]
    fn jobs_in_network_buffers_keep_every_guarantee(
        doc in scenario_doc(&["option1", "option2", "flink"]),
        (per_buffer, timeout_us, exclusive, floating) in (1u64..=8, 0u64..3000, 1u32..=3, 0u32..=4),
        failure in prop::option::of((any::<prop::sample::Index>(), 0u64..40_000)),
    ) {
        let mut doc = doc;
        let network = doc["network"].as_object_mut().unwrap();
        network.remove("channel_capacity");
        network.insert("buffer_size".into(), json!(per_buffer * 100));
        network.insert("record_bytes".into(), json!(100));
        network.insert("buffer_timeout".into(), json!(format!("{timeout_us}us")));
        network.insert("exclusive_buffers_per_channel".into(), json!(exclusive));
        network.insert("floating_buffers_per_gate".into(), json!(floating));
        if let Some((pick, at_us)) = failure {
            let vertices = doc["job"]["vertices"].as_array().unwrap().clone();
            let task = format!("{}[0]", pick.get(&vertices)["id"].as_str().unwrap());
            doc["faults"] = json!([{"fault": "fail_task", "task": task, "at": format!("{at_us}us")}]);
        }
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(report.violations.is_empty(), "{}\n{}", describe(&report), text);
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}
