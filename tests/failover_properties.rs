//! Properties of failover while checkpoints are taken after tasks finish (`docs/rules.md` P1.8,
//! P1.2, P1.6, P1.7; `docs/rules.md` F1.6), checked by the oracles of P4.
//!
//! A random small job graph (2–7 vertices, parallelism 1–3, 0–200 records per source subtask
//! with very different lengths, `at_least_once` or `two_phase_commit` sinks; the job generator of
//! `tests/common`) on a cluster of 2 TaskManagers, with a periodic checkpoint
//! every 2–20ms under `option1`, `option2` or `flink` (not `legacy`: it loses the last
//! transaction by design, P1.7), gets a random fault plan of 1–3 faults:
//! - `fail_task` of a random subtask,
//! - `lose_task_manager` of TaskManager 0 or 1 with a random `restart_after`,
//! - `crash_jobmaster` with a random `restart_after` (the HA election delay),
//!
//! each at a random time (0–80ms) or on a random predicate (`checkpoint_pending` /
//! `checkpoint_completed` of a small id, `finished` / `end_of_input` of a random subtask,
//! `all_sources_finished`). A fault whose predicate never holds simply does not fire (the
//! summary's diagnosis says so). The JobMaster fails over with a random scope (`region` or
//! `full`), a restart delay of 1–20ms, enough attempts (10) for every fault, and a heartbeat
//! timeout of 5–50ms. Checkpoint timeouts are generous (2s).
//!
//! Asserted: the job FINISHES; none of `exactly-once-output`, `finished-not-rerun`,
//! `job-terminates`, `consistent-cut`, `legal-transition`, `checkpoint-progress` is violated;
//! and the run is deterministic (same trace hash twice).
//!
//! The same jobs whose first source reads FLIP-27 splits (F1.13) keep every guarantee too,
//! and `split-ownership`.
//!
//! `PROPTEST_CASES` overrides the number of cases (default 128).

use flinksim::oracle::invariant::Invariant;
mod common;

use common::{cases, describe, graph, middle, run_doc, sink, source};
use flinksim::status::JobStatus;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A fault before it is resolved against the graph: kind (0 fail_task, 1 lose_task_manager,
/// 2 crash_jobmaster), subtask pick (vertex, index), task manager, restart_after in ms,
/// trigger (0: at; 1 pending; 2 completed; 3 finished; 4 end_of_input; 5 all sources
/// finished), time in µs, checkpoint id, predicate subtask pick.
type FaultSpec = (u8, (u8, u8), u32, u64, (u8, u64, u64, (u8, u8)));

fn fault() -> impl Strategy<Value = FaultSpec> {
    (
        0u8..3,
        (any::<u8>(), any::<u8>()),
        0u32..2,
        0u64..60,
        (
            prop_oneof![3 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8),
                1 => Just(4u8), 1 => Just(5u8)],
            0u64..80_000,
            1u64..6,
            (any::<u8>(), any::<u8>()),
        ),
    )
}

/// `vertex[i]` for a pick, over the generated vertices.
fn subtask(vertices: &[Value], (v, i): (u8, u8)) -> String {
    let vertex = &vertices[v as usize % vertices.len()];
    let p = vertex["parallelism"].as_u64().unwrap();
    format!("{}[{}]", vertex["id"].as_str().unwrap(), i as u64 % p)
}

fn fault_json(vertices: &[Value], f: &FaultSpec) -> Value {
    let &(kind, pick, tm, restart_ms, (trigger, at_us, id, pred_pick)) = f;
    let mut doc = match kind {
        0 => json!({"fault": "fail_task", "task": subtask(vertices, pick)}),
        1 => json!({"fault": "lose_task_manager", "task_manager": tm,
            "restart_after": format!("{restart_ms}ms")}),
        _ => json!({"fault": "crash_jobmaster", "restart_after": format!("{restart_ms}ms")}),
    };
    match trigger {
        0 => doc["at"] = json!(format!("{at_us}us")),
        1 => doc["when"] = json!({"checkpoint_pending": id}),
        2 => doc["when"] = json!({"checkpoint_completed": id}),
        3 => doc["when"] = json!({"finished": subtask(vertices, pred_pick)}),
        4 => doc["when"] = json!({"end_of_input": subtask(vertices, pred_pick)}),
        _ => doc["when"] = json!({"all_sources_finished": true}),
    }
    doc
}

fn scenario_doc() -> impl Strategy<Value = Value> {
    let shape = (
        prop::collection::vec(source(4, 200), 1..3),
        prop::collection::vec(middle(4), 0..4),
        prop::collection::vec(sink(4), 1..3),
    )
        .prop_map(|(sources, mut middles, sinks)| {
            middles.truncate(7 - sources.len() - sinks.len());
            (sources, middles, sinks)
        });
    let network = (
        (0u64..200, 0u64..1000), // channel latency µs: min, extra
        (1u64..500, 0u64..3000), // rpc latency µs: min, extra
        1u32..9,                 // channel capacity
        any::<bool>(),           // shuffled tie-break
    );
    let jobmaster = (
        any::<bool>(), // full scope
        1u64..=20,     // restart delay ms
        5u64..=50,     // heartbeat timeout ms
    );
    (
        shape,
        network,
        (2u64..=20, 0usize..3),
        prop::collection::vec(fault(), 1..4),
        jobmaster,
        any::<u64>(),
    )
        .prop_map(
            |(
                (sources, middles, sinks),
                (cl, rl, capacity, shuffled),
                (interval_ms, p),
                faults,
                (full, delay_ms, heartbeat_ms),
                seed,
            )| {
                let protocol = ["option1", "option2", "flink"][p];
                let (vertices, edges) = graph(&sources, &middles, &sinks, true);
                let faults: Vec<Value> = faults.iter().map(|f| fault_json(&vertices, f)).collect();
                json!({
                    "name": "generated-failover",
                    "seed": seed,
                    "mode": "streaming",
                    "job": {"vertices": vertices, "edges": edges},
                    "cluster": {"task_managers": 2},
                    "network": {
                        "channel_latency": format!("{}us..{}us", cl.0, cl.0 + cl.1),
                        "rpc_latency": format!("{}us..{}us", rl.0, rl.0 + rl.1),
                        "channel_capacity": capacity,
                    },
                    "checkpointing": {
                        "interval": format!("{interval_ms}ms"),
                        "timeout": "2s",
                        "finish_protocol": protocol,
                    },
                    "faults": faults,
                    "jobmaster": {
                        "failover_scope": if full { "full" } else { "region" },
                        "restart_strategy": {"delay": format!("{delay_ms}ms"), "max_attempts": 10},
                        "heartbeat_timeout": format!("{heartbeat_ms}ms"),
                    },
                    "budget": {"max_events": 3_000_000, "max_time": "30s"},
                    "tie_break": if shuffled { "shuffled" } else { "insertion" },
                })
            },
        )
}

/// [`scenario_doc`] under `jobmaster.failover: reconcile` (P3), with one more JobManager crash
/// at a random time, a random reconcile window and terminal-state retention, and a delay spike
/// on RPCs at the election that makes the TaskManagers' reports late by a random amount.
fn reconcile_doc() -> impl Strategy<Value = Value> {
    (
        scenario_doc(),
        0u64..60_000, // crash at, µs
        0u64..40,     // election delay, ms
        1u64..=60,    // reconcile timeout, ms
        0u64..=200,   // terminal state retention, ms
        0u64..30_000, // report delay, µs
    )
        .prop_map(
            |(mut doc, crash_us, elect_ms, reconcile_ms, retention_ms, delay_us)| {
                let jobmaster = doc["jobmaster"].as_object_mut().unwrap();
                jobmaster.insert("failover".into(), json!("reconcile"));
                jobmaster.insert(
                    "reconcile_timeout".into(),
                    json!(format!("{reconcile_ms}ms")),
                );
                jobmaster.insert(
                    "terminal_state_retention".into(),
                    json!(format!("{retention_ms}ms")),
                );
                let faults = doc["faults"].as_array_mut().unwrap();
                faults.push(
                    json!({"at": format!("{crash_us}us"), "fault": "crash_jobmaster",
                "restart_after": format!("{elect_ms}ms")}),
                );
                if delay_us > 0 {
                    faults.push(json!({"at": format!("{}us", crash_us + elect_ms * 1000),
                    "fault": "delay_spike", "extra": format!("{delay_us}us"),
                    "duration": "1ms", "target": "rpcs"}));
                }
                doc
            },
        )
}

/// [`scenario_doc`] whose first source reads FLIP-27 splits (F1.13): 1–10 splits of 0–60
/// records, assigned by its enumerator on request, under the same faults (regional and global
/// failovers, JobManager crashes).
fn splits_doc() -> impl Strategy<Value = Value> {
    (scenario_doc(), 1u32..=10, 0u64..=60).prop_map(|(mut doc, splits, records)| {
        let source = &mut doc["job"]["vertices"][0];
        source["records"] = json!(records);
        let id = source["id"].as_str().unwrap().to_owned();
        doc["coordinators"] = json!({ id: {"splits": splits} });
        doc
    })
}

/// The invariants this property checks (P4).
const CHECKED: [Invariant; 6] = [
    Invariant::ExactlyOnceOutput,
    Invariant::FinishedNotRerun,
    Invariant::JobTerminates,
    Invariant::ConsistentCut,
    Invariant::LegalTransition,
    Invariant::CheckpointProgress,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), failure_persistence: None, .. ProptestConfig::default() })]

    /// P1.8 / F1.6 under faults: the job restarts from the latest completed checkpoint, keeps
    /// finished subtasks finished, and still FINISHES with every guarantee of P4.
    #[test]
    fn failover_keeps_every_guarantee(doc in scenario_doc()) {
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(
            report.violations.iter().all(|v| !CHECKED.contains(&v.invariant)),
            "{}\n{}", describe(&report), text
        );
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }

    /// F1.13 under faults: split enumerators are checkpointed and reset with their readers,
    /// so every split is read exactly once into the committed output, and a split is assigned
    /// again only after a restore gave it back (`split-ownership`).
    #[test]
    fn splits_keep_every_guarantee(doc in splits_doc()) {
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(
            report.violations.iter().all(|v| !CHECKED.contains(&v.invariant)
                && v.invariant != Invariant::SplitOwnership),
            "{}\n{}", describe(&report), text
        );
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }

    /// P3 under faults: TaskManagers keep their tasks through JobManager crashes, the new
    /// JobManager reconciles with their reports, and whatever the outcome (RUNNING, FINISHED,
    /// or FAILING then failover) the job FINISHES with every guarantee of P4, and no refused
    /// RPC is lost (`no-lost-rpc`).
    #[test]
    fn reconciliation_keeps_every_guarantee(doc in reconcile_doc()) {
        let text = doc.to_string();
        let report = run_doc(&text);
        prop_assert_eq!(report.status, JobStatus::Finished, "{}\n{}", describe(&report), text);
        prop_assert!(
            report.violations.iter().all(|v| !CHECKED.contains(&v.invariant)
                && v.invariant != Invariant::NoLostRpc),
            "{}\n{}", describe(&report), text
        );
        let again = run_doc(&text);
        prop_assert_eq!(report.trace_hash, again.trace_hash, "determinism\n{}", text);
    }
}
