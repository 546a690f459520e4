//! Batch job recovery after a JobManager crash (P2, FLIP-383): every batch scenario twice
//! with equal hashes, recovery against a full restart, and a property over random batch
//! DAGs, crash times, flush intervals and TaskManager return times.

use flinksim::bug::Bug;
use flinksim::fuzz::batch_gen;
use flinksim::oracle::invariant::Invariant;
use flinksim::run::{run, RunOptions, RunReport};
use flinksim::scenario::{self, Scenario};
use flinksim::trace::ReconcileOutcome;
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
            eager_sources: false,
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

#[test]
fn reconciliation_keeps_running_what_a_restart_interrupts() {
    let reconciled = go(&load("batch-reconcile-all-in-time"));
    let restarted = go(&load("batch-restart-same-crash"));
    assert!(reconciled.violations.is_empty() && restarted.violations.is_empty());
    assert_eq!(reconciled.sinks, restarted.sinks);
    let r = &reconciled.reconciliations[0];
    assert_eq!(r.outcome, Some(ReconcileOutcome::Running));
    assert_eq!((r.kept_running, r.kept_finished), (3, 6));
    assert!(reconciled.batch.as_ref().unwrap().recoveries.is_empty());
    let recovery = &restarted.batch.as_ref().unwrap().recoveries[0];
    assert_eq!(
        recovery.interrupted, 3,
        "the restart fails agg's running tasks"
    );
    assert!(reconciled.sim_time < restarted.sim_time);
}

#[test]
fn refused_rpcs_are_kept_and_applied_and_dropping_them_is_caught() {
    let scenario = load("batch-reconcile-refused-rpcs");
    let ok = go(&scenario);
    assert!(ok.violations.is_empty(), "{:?}", ok.violations);
    assert!(ok.rpcs_kept > 0 && ok.rpcs_resent > 0);
    assert!(caught_with(
        scenario,
        Bug::DropRefusedRpc,
        Invariant::NoLostRpc
    ));
}

/// `scenario` with `bug` injected violates `invariant`.
fn caught_with(mut scenario: Scenario, bug: Bug, invariant: Invariant) -> bool {
    scenario.bug = Some(bug);
    go(&scenario)
        .violations
        .iter()
        .any(|v| v.invariant == invariant)
}

#[test]
fn a_failing_reconciliation_recovers_like_a_batch_job() {
    let report = go(&load("batch-reconcile-finished-during-outage-no-retention"));
    assert!(report.violations.is_empty());
    assert_eq!(
        report.reconciliations[0].outcome,
        Some(ReconcileOutcome::Failing)
    );
    let recovery = &report.batch.as_ref().unwrap().recoveries[0];
    assert_eq!(recovery.recovered.len(), 6);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Whatever crashes, flush intervals and TaskManager returns (the fuzz generator's batch
    /// space, `fuzz::batch_gen`): no oracle fires (in particular `minimal-rerun` and
    /// `exactly-once-output`), and the job finishes with the failure-free output.
    #[test]
    fn batch_recovery_keeps_every_guarantee(
        spec in batch_gen::spec(),
        shuffled in any::<bool>(),
        seed in 0u64..1_000_000,
    ) {
        let doc = batch_gen::document("batch-property", seed, &spec, shuffled);
        let s = scenario::parse(&doc.to_string(), "property.json").unwrap_or_else(|e| panic!("{e}\n{doc}"));
        let report = run(&s, &RunOptions { seed: None, retain: Retain::Nothing, eager_sources: false });
        prop_assert!(report.violations.is_empty(), "{:?}\n{}", report.violations, doc);
        prop_assert_eq!(report.status, flinksim::status::JobStatus::Finished, "{:?}", report.diagnosis);
        prop_assert_eq!(report.sink_records(), spec.expected_sink_records());
    }
}

/// F2.7: an attempt deployed again elsewhere stays on its TaskManager until that one learns of
/// it. Without reconciliation it fails when its TaskManager loses its leader (the recovery
/// counts it interrupted); under reconciliation the slot it holds is refused when its
/// TaskManager registers again. Both runs are deterministic, and keeping the replaced attempt
/// (`keep-replaced-attempt`) lets a TaskManager run more tasks than it has slots.
#[test]
fn a_replaced_attempt_ends_where_it_ran_when_its_taskmanager_learns() {
    let restarted = load("batch-second-crash-after-discarded-finish");
    let (a, b) = (go(&restarted), go(&restarted));
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.batch.as_ref().unwrap().recoveries[0].interrupted, 1);
    for name in [
        "batch-reconnected-taskmanager-fails-replaced-attempt",
        "batch-replaced-attempt-slot-refused-on-registration",
    ] {
        let s = load(name);
        let (a, b) = (go(&s), go(&s));
        assert_eq!(a.trace_hash, b.trace_hash, "{name}");
        assert!(a.violations.is_empty(), "{name}: {:?}", a.violations);
    }
    let kept = load("batch-replaced-attempt-slot-refused-on-registration");
    assert!(caught_with(
        kept,
        Bug::KeepReplacedAttempt,
        Invariant::SlotCapacity
    ));
}
