//! Restart against reconcile on one JobManager crash (`docs/rules.md` P1.8 against P3): the same
//! job, the same crash, the same election delay. Reconciliation keeps every task running, so
//! nothing is restarted or replayed and the job finishes sooner; both keep the output exactly
//! once.

use flinksim::run::{run, RunOptions, RunReport};
use flinksim::scenario;
use flinksim::status::JobStatus;
use flinksim::trace::{ReconcileOutcome, Retain, TraceEvent};

fn load_and_run(name: &str) -> RunReport {
    let path = format!("{}/scenarios/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let scenario = scenario::load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
    run(
        &scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        },
    )
}

#[test]
fn reconcile_keeps_the_tasks_that_restart_would_rerun() {
    let restart = load_and_run("failover-jobmanager-crash-precommitted");
    let reconcile = load_and_run("reconcile-all-in-time");
    for report in [&restart, &reconcile] {
        assert_eq!(report.status, JobStatus::Finished);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        assert_eq!(report.committed_records, 500);
    }

    // Restart: the new JobManager redeploys every subtask from checkpoint 1 and replays.
    assert_eq!(restart.failovers.len(), 1);
    let failover = &restart.failovers[0];
    assert_eq!(failover.restarted.len(), 5);
    assert!(failover.records_replayed > 0);
    assert!(restart.reconciliations.is_empty());

    // Reconcile: no failover, every execution reported RUNNING and kept running.
    assert!(reconcile.failovers.is_empty());
    assert_eq!(reconcile.reconciliations.len(), 1);
    let r = &reconcile.reconciliations[0];
    assert_eq!(r.outcome, Some(ReconcileOutcome::Running));
    assert_eq!((r.reports, r.late_reports, r.kept_running), (5, 0, 5));
    // The acknowledgements sent while no JobManager ran were kept and sent again.
    assert!(reconcile.rpcs_kept > 0);
    assert_eq!(reconcile.rpcs_kept, reconcile.rpcs_resent);

    // Back to RUNNING at most a window later than restart's restore, and done sooner.
    let running_again = r.ended.expect("the window closed");
    let restored = failover.restored_at.expect("restored");
    assert!(running_again >= restored);
    assert!(reconcile.sim_time < restart.sim_time);
    assert!(reconcile.events < restart.events);
}

#[test]
fn a_reconciled_run_is_deterministic() {
    for name in [
        "reconcile-refused-burst",
        "reconcile-taskmanager-late",
        "reconcile-finished-during-outage",
    ] {
        let a = load_and_run(name);
        let b = load_and_run(name);
        assert_eq!(a.trace_hash, b.trace_hash, "{name}");
        assert_eq!(a.rpcs_kept, b.rpcs_kept, "{name}");
    }
}

/// `name`'s run had one reconcile window, which ended `outcome` with these (reports, late
/// reports, kept running, kept finished).
fn assert_one_window(
    name: &str,
    report: &RunReport,
    outcome: ReconcileOutcome,
    counts: (u32, u32, u32, u32),
) {
    let [r] = &report.reconciliations[..] else {
        panic!(
            "{name}: one reconciliation, got {}",
            report.reconciliations.len()
        );
    };
    assert_eq!(r.outcome, Some(outcome), "{name}");
    assert_eq!(
        (r.reports, r.late_reports, r.kept_running, r.kept_finished),
        counts,
        "{name}: (reports, late reports, kept running, kept finished)"
    );
}

/// The summary's reconciliation figures (`flinksim run` prints them; P3.2, P3.4), pinned for
/// windows that keep running and finished executions, that fail for a TaskManager lost or
/// late, and that get late reports: reports in the window and after it, executions kept
/// running and kept finished, and whether the FAILING restart counted against the strategy.
#[test]
fn the_summary_counts_what_each_window_saw() {
    // (scenario, outcome, reports, late reports, kept running, kept finished, failovers)
    let table = [
        (
            "reconcile-all-in-time",
            ReconcileOutcome::Running,
            5,
            0,
            5,
            0,
            0,
        ),
        (
            "reconcile-finished-during-outage",
            ReconcileOutcome::Running,
            5,
            0,
            1,
            4,
            0,
        ),
        (
            "reconcile-refused-burst",
            ReconcileOutcome::Running,
            9,
            0,
            1,
            8,
            0,
        ),
        (
            "reconcile-slow-rpcs-keep-order",
            ReconcileOutcome::Failing,
            0,
            7,
            0,
            0,
            1,
        ),
        (
            "reconcile-taskmanager-late",
            ReconcileOutcome::Failing,
            3,
            0,
            3,
            0,
            1,
        ),
        (
            "reconcile-taskmanager-lost-in-window",
            ReconcileOutcome::Failing,
            2,
            0,
            0,
            0,
            1,
        ),
    ];
    for (name, outcome, reports, late, running, finished, failovers) in table {
        let report = load_and_run(name);
        assert_one_window(name, &report, outcome, (reports, late, running, finished));
        assert_eq!(report.failovers.len(), failovers, "{name}: failovers");
    }
}

/// The same figures for batch jobs' windows (P3.2, P3.4 with P2.4): a window that keeps running
/// and finished executions, one where every execution finished during the outage, one on the
/// remote shuffle, and three FAILING ones (a task failed during the outage, a TaskManager late,
/// every report after the window).
#[test]
fn the_summary_counts_what_each_batch_window_saw() {
    // (scenario, outcome, reports, late reports, kept running, kept finished)
    let table = [
        (
            "batch-reconcile-all-in-time",
            ReconcileOutcome::Running,
            9,
            0,
            3,
            6,
        ),
        (
            "batch-reconcile-finished-during-outage",
            ReconcileOutcome::Running,
            9,
            0,
            0,
            9,
        ),
        (
            "batch-reconcile-remote-shuffle",
            ReconcileOutcome::Running,
            3,
            0,
            0,
            3,
        ),
        (
            "batch-reconcile-task-failed-during-outage",
            ReconcileOutcome::Failing,
            9,
            0,
            0,
            8,
        ),
        (
            "batch-reconcile-taskmanager-late",
            ReconcileOutcome::Failing,
            4,
            0,
            0,
            4,
        ),
        (
            "batch-reconcile-window-shorter-than-reports",
            ReconcileOutcome::Failing,
            0,
            4,
            0,
            0,
        ),
    ];
    for (name, outcome, reports, late, running, finished) in table {
        let report = load_and_run(name);
        assert!(
            report.violations.is_empty(),
            "{name}: {:?}",
            report.violations
        );
        assert_one_window(name, &report, outcome, (reports, late, running, finished));
    }
}

/// Every recovery record of a shipped batch scenario's summary tells the times the trace tells
/// (P2.4; `recovery_time` is read from them): the crash is a `jobmaster_lost` instant, the
/// election the first `jobmaster_elected` after it, and the job runs again no earlier.
#[test]
fn batch_recovery_records_match_the_trace() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the scenarios folder")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut checked = 0;
    for file in files {
        let scenario = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        if scenario.mode != scenario::Mode::Batch {
            continue;
        }
        let name = file.display();
        let report = run(
            &scenario,
            &RunOptions {
                seed: None,
                retain: Retain::Protocol,
                eager_sources: false,
            },
        );
        let instants = |wanted: fn(&TraceEvent) -> bool| -> Vec<_> {
            let kept = report.trace.kept().iter();
            kept.filter(|(_, _, e)| wanted(e))
                .map(|&(_, t, _)| t)
                .collect()
        };
        let lost = instants(|e| matches!(e, TraceEvent::JobMasterLost { .. }));
        let elected = instants(|e| matches!(e, TraceEvent::JobMasterElected { .. }));
        let figures = report
            .batch
            .as_ref()
            .expect("a batch run has batch figures");
        for r in &figures.recoveries {
            assert!(
                lost.contains(&r.crashed_at),
                "{name}: crashed at {}",
                r.crashed_at
            );
            let next = elected.iter().find(|&&t| t >= r.crashed_at);
            assert_eq!(
                next,
                Some(&r.elected_at),
                "{name}: elected at {}",
                r.elected_at
            );
            if let Some(running) = r.running_at {
                assert!(running >= r.elected_at, "{name}: running at {running}");
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 20,
        "only {checked} recoveries among the shipped batch scenarios"
    );
}
