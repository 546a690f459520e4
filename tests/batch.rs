//! Batch job recovery after a JobManager crash (P2, FLIP-383): every batch scenario twice
//! with equal hashes, recovery against a full restart, and a property over random batch
//! DAGs, crash times, flush intervals and TaskManager return times.

use flinksim::run::{run, RunOptions, RunReport};
use flinksim::scenario::{self, Scenario};
use flinksim::trace::Retain;
use proptest::prelude::*;

fn load(name: &str) -> Scenario {
    let path = format!("{}/scenarios/{name}.json", env!("CARGO_MANIFEST_DIR"));
    scenario::load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"))
}

fn go(scenario: &Scenario) -> RunReport {
    run(
        scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Everything,
        },
    )
}

#[test]
fn every_batch_scenario_runs_twice_with_equal_hashes() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("scenarios/") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if !name.starts_with("batch-") {
            continue;
        }
        let s = load(&name);
        let (a, b) = (go(&s), go(&s));
        assert_eq!(a.trace_hash, b.trace_hash, "{name}");
        assert_eq!(a.trace.kept(), b.trace.kept(), "{name}");
        seen += 1;
    }
    assert!(seen >= 10, "the batch scenarios are shipped");
}

#[test]
fn recovery_saves_work_against_a_full_restart() {
    let recovery = load("batch-crash-mid-stage");
    let mut restart = recovery.clone();
    restart.batch.as_mut().unwrap().job_recovery = false;
    let (a, b) = (go(&recovery), go(&restart));
    assert!(a.violations.is_empty() && b.violations.is_empty());
    assert_eq!(a.sinks, b.sinks, "both commit the failure-free output");
    let (fa, fb) = (a.batch.unwrap(), b.batch.unwrap());
    assert_eq!(fa.recoveries[0].recovered.len(), 8);
    assert_eq!(fa.recoveries[0].rerun.len(), 1);
    assert!(fb.recoveries[0].full_restart);
    assert_eq!(fb.recoveries[0].recovered.len(), 0);
    assert_eq!(
        fb.recoveries[0].rerun.len(),
        9,
        "everything that had finished runs again"
    );
    assert!(fa.redone() < fb.redone());
    assert!(a.sim_time < b.sim_time);
}

#[test]
fn the_remote_shuffle_keeps_what_a_lost_taskmanager_takes_with_it() {
    let internal = go(&load("batch-taskmanager-never-returns"));
    let remote = go(&load("batch-remote-shuffle"));
    let kept = |r: &RunReport| r.batch.as_ref().unwrap().recoveries[0].recovered.len();
    assert!(kept(&remote) > kept(&internal));
}

/// A batch job: `sources` sources feeding a map, optionally a second path (a diamond), an
/// adaptive keyed sum and a sink.
/// The drawn shape of a property case.
#[derive(Clone, Copy)]
struct Shape {
    parallelism: u32,
    splits: u32,
    diamond: bool,
    remote: bool,
    supports_snapshot: bool,
    flush_us: u64,
    min_pause_us: u64,
}

fn batch_job(shape: &Shape, faults: Vec<serde_json::Value>) -> Scenario {
    let Shape {
        parallelism,
        splits,
        diamond,
        remote,
        supports_snapshot,
        flush_us,
        min_pause_us,
    } = *shape;
    let mut vertices = vec![
        serde_json::json!({"id": "src", "operator": "source", "parallelism": parallelism, "records": 20, "process_time": "20us"}),
        serde_json::json!({"id": "map", "operator": "map", "parallelism": parallelism, "process_time": "10us"}),
        serde_json::json!({"id": "agg", "operator": "keyed_sum", "parallelism": "auto", "process_time": "10us"}),
        serde_json::json!({"id": "sink", "operator": "sink", "parallelism": 1}),
    ];
    let mut edges = vec![
        serde_json::json!({"from": "src", "to": "map", "pattern": "forward"}),
        serde_json::json!({"from": "map", "to": "agg", "pattern": "all_to_all"}),
        serde_json::json!({"from": "agg", "to": "sink", "pattern": "all_to_all"}),
    ];
    if diamond {
        vertices.push(serde_json::json!({"id": "side", "operator": "map", "parallelism": 2}));
        edges.push(serde_json::json!({"from": "src", "to": "side", "pattern": "all_to_all"}));
        edges.push(serde_json::json!({"from": "side", "to": "agg", "pattern": "all_to_all"}));
    }
    let doc = serde_json::json!({
        "name": "batch-property",
        "seed": 1,
        "mode": "batch",
        "job": {"vertices": vertices, "edges": edges},
        "cluster": {"task_managers": 3, "slots_per_task_manager": 2},
        "batch": {
            "shuffle": {"kind": if remote { "remote" } else { "internal" }},
            "adaptive_parallelism": {"min": 1, "max": 4, "bytes_per_task": 8000},
            "job_events": {"flush_interval": format!("{flush_us}us"), "snapshot_min_pause": format!("{min_pause_us}us")},
            "previous_worker_timeout": "20ms",
            "coordinators": {"src": {"splits": splits, "supports_batch_snapshot": supports_snapshot}}
        },
        "faults": faults,
        // Exhausting the restart strategy is no protocol violation: allow plenty.
        "jobmaster": {"restart_strategy": {"max_attempts": 1000}},
        "budget": {"max_time": "60s"}
    });
    scenario::parse(&doc.to_string(), "property.json").unwrap_or_else(|e| panic!("{e}\n{doc}"))
}

fn faults() -> impl Strategy<Value = Vec<serde_json::Value>> {
    let crash = (1u64..40_000, 1u64..60_000).prop_map(|(at, after)| {
        serde_json::json!({"at": format!("{at}us"), "fault": "crash_jobmaster", "restart_after": format!("{after}us")})
    });
    let tm = (0u32..3, 1u64..60_000, 1u64..120_000, any::<bool>()).prop_map(|(t, at, d, lose)| {
        if lose {
            serde_json::json!({"at": format!("{at}us"), "fault": "lose_task_manager", "task_manager": t, "restart_after": format!("{d}us")})
        } else {
            serde_json::json!({"at": format!("{at}us"), "fault": "disconnect_task_manager", "task_manager": t, "duration": format!("{d}us")})
        }
    });
    let task = (0u32..2, 1u64..40_000).prop_map(|(i, at)| {
        serde_json::json!({"at": format!("{at}us"), "fault": "fail_task", "task": format!("map[{i}]")})
    });
    (
        prop::collection::vec(crash, 1..3),
        prop::collection::vec(tm, 0..3),
        prop::option::of(task),
    )
        .prop_map(|(mut c, t, f)| {
            c.extend(t);
            c.extend(f);
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whatever crashes, flush intervals and TaskManager returns: no oracle fires (in
    /// particular `minimal-rerun` and `exactly-once-output`), and the job finishes with the
    /// failure-free output.
    #[test]
    fn batch_recovery_keeps_every_guarantee(
        parallelism in 2u32..4,
        splits in 1u32..10,
        diamond in any::<bool>(),
        remote in any::<bool>(),
        supports in any::<bool>(),
        flush_us in 200u64..20_000,
        min_pause_us in prop::sample::select(vec![0u64, 5_000, 180_000_000]),
        faults in faults(),
        seed in 0u64..1_000_000,
    ) {
        let shape = Shape { parallelism, splits, diamond, remote, supports_snapshot: supports, flush_us, min_pause_us };
        let s = batch_job(&shape, faults);
        let report = run(&s, &RunOptions { seed: Some(seed), retain: Retain::Nothing });
        prop_assert!(report.violations.is_empty(), "{:?}\n{}", report.violations, s.document);
        prop_assert_eq!(report.status, flinksim::status::JobStatus::Finished, "{:?}", report.diagnosis);
        let paths = if diamond { 2 } else { 1 };
        prop_assert_eq!(report.sink_records(), u64::from(splits) * 20 * paths);
    }
}
