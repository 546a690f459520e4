//! Every scenario in `scenarios/` and every twin in `conformance/scenarios/` is a test: it must
//! meet its `expect` block, and running it twice must give the same trace hash.

use flinksim::report::check_expectations;
use flinksim::run::{pacing_is_comparable, run, RunOptions};
use flinksim::scenario;
use flinksim::trace::Retain;
use std::path::PathBuf;

/// The shipped scenarios and the conformance harness's twins of the Flink 2.3 reference jobs.
fn scenario_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [root.join("scenarios"), root.join("conformance/scenarios")] {
        files.extend(
            std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.expect("readable entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "json")),
        );
    }
    files.sort();
    files
}

/// Every scenario meets its expectations, and a second run gives the same trace hash. Where
/// the two must agree (`pacing_is_comparable`: insertion ties), the second run gives every
/// source step a kernel event of its own, so it also shows that sources written lazily (F1.14
/// step 11) are invisible; enough of the shipped scenarios write lazily that this is no
/// empty claim.
#[test]
fn every_scenario_meets_its_expectations_twice_with_equal_hashes() {
    let files = scenario_files();
    assert!(files.len() >= 5, "the shipped scenarios are missing");
    let mut paced = 0;
    for file in files {
        let scenario = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let options = RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        };
        let first = run(&scenario, &options);
        let failures = check_expectations(&scenario.expect, &first);
        assert!(failures.is_empty(), "{}: {failures:#?}", file.display());
        let eager = pacing_is_comparable(&scenario);
        let second = run(
            &scenario,
            &RunOptions {
                eager_sources: eager,
                ..options
            },
        );
        assert_eq!(
            first.trace_hash,
            second.trace_hash,
            "{}: two runs diverged{}",
            file.display(),
            if eager {
                " (the second with every source step an event: lazy sources were seen)"
            } else {
                ""
            }
        );
        if eager {
            // A lazy source's wake-ups are a subset of the eager source's steps.
            assert!(second.events >= first.events, "{}", file.display());
            paced += u32::from(second.events > first.events);
        } else {
            assert_eq!(first.events, second.events);
        }
    }
    assert!(paced >= 4, "only {paced} scenarios write sources lazily");
}

/// A hold released by a predicate orders the run by protocol events, not by latencies: under
/// every seed (so every RPC latency of its `100us..300us` range), checkpoint 1 expires while
/// the sink waits for the held barrier and checkpoint 2, whose trigger releases the channel,
/// completes; nothing is lost. The expectations are the scenario's own, for each seed.
#[test]
fn a_hold_released_by_a_predicate_gives_the_same_story_under_every_seed() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let scenario = scenario::load(&root.join("scenarios/hold-channel-expires-checkpoint.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut hashes = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let options = RunOptions {
            seed: Some(seed),
            retain: Retain::Nothing,
            eager_sources: false,
        };
        let report = run(&scenario, &options);
        let mut expect = scenario.expect.clone();
        expect.trace_hash = None;
        let failures = check_expectations(&expect, &report);
        assert!(failures.is_empty(), "seed {seed}: {failures:#?}");
        hashes.insert(report.trace_hash);
    }
    assert!(hashes.len() > 30, "the seeds did change the timings");
}

/// The P3.3 figures and a recovery's interrupted tasks are checked, not only read: a scenario
/// whose expectation differs from the run by one fails with a message naming the figure.
#[test]
fn kept_rpcs_and_interrupted_tasks_are_judged() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let load = |name: &str| {
        scenario::load(&root.join(format!("scenarios/{name}.json")))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let options = RunOptions {
        seed: None,
        retain: Retain::Nothing,
        eager_sources: false,
    };
    let mut kept = load("batch-reconcile-window-loses-taskmanager-partitions");
    let report = run(&kept, &options);
    assert!(check_expectations(&kept.expect, &report).is_empty());
    kept.expect.rpcs_kept = Some(8);
    kept.expect.rpcs_resent = Some(7);
    assert_eq!(
        check_expectations(&kept.expect, &report),
        [
            "expected 8 kept RPCs, got 7",
            "expected 7 resent RPCs, got 6"
        ]
    );
    let mut crashes = load("batch-second-crash-after-discarded-finish");
    let report = run(&crashes, &options);
    assert!(check_expectations(&crashes.expect, &report).is_empty());
    let recoveries = crashes.expect.recoveries.as_mut().expect("pinned");
    recoveries[1].interrupted = Some(3);
    assert_eq!(
        check_expectations(&crashes.expect, &report),
        ["recovery 1: expected 3 tasks interrupted by the lost leader, got 2"]
    );
}
