//! The conformance fixtures: recorded runs of real Flink 2.3 (`conformance/runs/`) and the
//! traces imported from them (`conformance/traces/`). No Java needed: the importer must
//! reproduce every committed trace from its raw run, every trace must conform, a deliberately
//! corrupted copy of each must be rejected by the rule it breaks, and bad input must give one
//! clear error, exit code 2 and no output file.

use flinksim::conform::check::{check, Departure};
use flinksim::conform::import::import;
use flinksim::conform::trace::{Entry, Event, Trace};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// Every committed trace with the run it was imported from.
fn fixtures() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let dir = root().join("traces");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("conformance/traces exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    traces.sort();
    for trace in traces {
        let stem = trace.file_stem().unwrap().to_string_lossy().to_string();
        let (job, run) = stem.rsplit_once("-run-").expect("<job>-run-<N>.jsonl");
        out.push((
            root().join("runs").join(job).join(format!("run-{run}")),
            trace,
        ));
    }
    assert!(out.len() >= 8, "the conformance fixtures are missing");
    out
}

fn load(trace: &Path) -> Trace {
    Trace::read(trace).unwrap_or_else(|e| panic!("{e}"))
}

fn rules(departures: &[Departure]) -> Vec<&'static str> {
    departures.iter().map(|d| d.rule).collect()
}

#[test]
fn the_importer_reproduces_every_committed_trace() {
    for (run, trace) in fixtures() {
        let imported = import(&run).unwrap_or_else(|e| panic!("{e}"));
        let committed = std::fs::read_to_string(&trace).unwrap();
        assert!(
            imported.to_text() == committed,
            "{}: importing {} gives another trace (run conformance/refresh)",
            trace.display(),
            run.display()
        );
        assert_eq!(imported, load(&trace), "{}", trace.display());
    }
}

#[test]
fn every_fixture_conforms_and_maps_its_protocol_lines() {
    let mut jobs = std::collections::BTreeSet::new();
    for (_, trace) in fixtures() {
        let t = load(&trace);
        jobs.insert(t.header.job.clone());
        let report = check(&t).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.departures.is_empty(),
            "{}: {:#?}",
            trace.display(),
            report.departures
        );
        assert_eq!(report.outcomes.status, "FINISHED", "{}", trace.display());
        // Most protocol-logger lines are mapped or known; what is not is listed, not dropped.
        let s = &t.summary;
        assert!(s.mapped > 100, "{}: {s:?}", trace.display());
        assert!(
            s.unmapped_total() < s.mapped + s.known,
            "{}",
            trace.display()
        );
        for u in s.unmapped.values() {
            assert!(!u.examples.is_empty() && u.examples.len() <= 3);
        }
    }
    assert!(jobs.len() >= 7, "fixtures of most reference jobs: {jobs:?}");
}

/// The streaming fixtures' shared facts: the outcomes the twins are compared on.
#[test]
fn streaming_fixtures_show_the_protocol_steps() {
    for (_, trace) in fixtures() {
        let t = load(&trace);
        if t.header.mode != "streaming" {
            continue;
        }
        let r = check(&t).unwrap();
        assert_eq!(
            r.outcomes.checkpoint_after_first_source_finished,
            Some(true)
        );
        assert!(r.outcomes.checkpoints_completed >= 5, "{}", trace.display());
        let expected = match t.header.job.as_str() {
            "a-two-sources-2pc" | "b-failover-after-source-finished" => 16,
            "c-two-regions-one-fails" => 600,
            "d-unaligned-backpressure" => 700,
            other => panic!("unknown job {other}"),
        };
        assert_eq!(r.outcomes.committed, Some(expected), "{}", trace.display());
        match t.header.job.as_str() {
            "b-failover-after-source-finished" => {
                assert_eq!(r.outcomes.finished_on_restore, vec!["short[0]".to_owned()]);
                assert_eq!(r.outcomes.regions_restarted.len(), 1);
                assert_eq!(r.outcomes.regions_restarted[0].len(), 5);
            }
            "c-two-regions-one-fails" => {
                let mut region = r.outcomes.regions_restarted[0].clone();
                region.sort();
                assert_eq!(region, ["mapB[0]", "sinkB[0]", "srcB[0]"]);
            }
            _ => assert!(r.outcomes.regions_restarted.is_empty()),
        }
    }
}

fn index_of(t: &Trace, from: usize, f: impl Fn(&Event) -> bool) -> Option<usize> {
    (from..t.entries.len()).find(|&i| f(&t.entries[i].event))
}

/// A source's input ends, then every completion up to its FINISHED is dropped: it finished
/// without a final checkpoint (F1.5).
fn drop_final_completions(t: &mut Trace) -> bool {
    let Some(eoi) = index_of(t, 0, |e| matches!(e, Event::EndOfInput { .. })) else {
        return false;
    };
    let Event::EndOfInput { subtask, attempt } = t.entries[eoi].event.clone() else {
        unreachable!()
    };
    let Some(fin) = index_of(t, eoi, |e| {
        matches!(e, Event::TaskState { subtask: s, attempt: a, to, .. }
            if *s == subtask && *a == attempt && to == "FINISHED")
    }) else {
        return false;
    };
    let before = t.entries.len();
    // The completions between the end of input and FINISHED, by position.
    let keep: Vec<Entry> = t
        .entries
        .iter()
        .enumerate()
        .filter(|(j, e)| {
            !(*j > eoi && *j < fin && matches!(e.event, Event::CheckpointCompleted { .. }))
        })
        .map(|(_, e)| e.clone())
        .collect();
    t.entries = keep;
    t.entries.len() < before
}

/// The first acknowledgement of a checkpoint moves before its trigger.
fn ack_before_trigger(t: &mut Trace) -> bool {
    let Some(trig) = index_of(t, 0, |e| matches!(e, Event::CheckpointTriggered { .. })) else {
        return false;
    };
    let Event::CheckpointTriggered { checkpoint, .. } = t.entries[trig].event else {
        unreachable!()
    };
    let Some(ack) = index_of(
        t,
        trig,
        |e| matches!(e, Event::CheckpointAcknowledged { checkpoint: c, .. } if *c == checkpoint),
    ) else {
        return false;
    };
    let entry = t.entries.remove(ack);
    t.entries.insert(trig, entry);
    true
}

/// A checkpoint with subtasks finished at trigger time triggers one of them too.
fn trigger_a_finished_subtask(t: &mut Trace) -> bool {
    for e in &mut t.entries {
        if let Event::CheckpointTriggered {
            triggered,
            finished: Some(finished),
            ..
        } = &mut e.event
        {
            if let Some(f) = finished.first() {
                triggered.push(f.clone());
                return true;
            }
        }
    }
    false
}

/// A committed record is committed again right away, with no restore in between.
fn commit_twice(t: &mut Trace) -> bool {
    let Some(i) = index_of(t, 0, |e| matches!(e, Event::Commit { .. })) else {
        return false;
    };
    let copy = t.entries[i].clone();
    t.entries.insert(i + 1, copy);
    true
}

/// After a JobManager crash, an execution recovered FINISHED and kept is scheduled again.
fn rerun_a_recovered_execution(t: &mut Trace) -> bool {
    let Some(crash) = index_of(t, 0, |e| matches!(e, Event::JobmasterLost { .. })) else {
        return false;
    };
    let scheduled_later = |t: &Trace, i: usize, name: &str| {
        index_of(t, i, |e| {
            matches!(e, Event::ExecutionState { subtask, to, .. } if subtask == name && to == "SCHEDULED")
        })
        .is_some()
    };
    let Some(i) = (crash..t.entries.len()).find(|&i| match &t.entries[i].event {
        Event::ExecutionState {
            subtask, from, to, ..
        } => from == "CREATED" && to == "FINISHED" && !scheduled_later(t, i, subtask),
        _ => false,
    }) else {
        return false;
    };
    let Event::ExecutionState {
        subtask,
        attempt,
        graph,
        ..
    } = t.entries[i].event.clone()
    else {
        unreachable!()
    };
    let mut again = t.entries[i].clone();
    again.event = Event::ExecutionState {
        subtask,
        attempt: attempt + 1,
        graph,
        from: "CREATED".into(),
        to: "SCHEDULED".into(),
    };
    t.entries.insert(i + 1, again);
    true
}

/// An execution jumps from CREATED straight to RUNNING.
fn skip_deployment(t: &mut Trace) -> bool {
    for e in &mut t.entries {
        if let Event::ExecutionState { from, to, .. } = &mut e.event {
            if from == "INITIALIZING" && to == "RUNNING" {
                *from = "CREATED".into();
                return true;
            }
        }
    }
    false
}

/// A checkpoint id is triggered a second time, later.
fn reuse_a_checkpoint_id(t: &mut Trace) -> bool {
    let Some(i) = index_of(t, 0, |e| matches!(e, Event::CheckpointTriggered { .. })) else {
        return false;
    };
    let Some(j) = index_of(t, i + 1, |e| matches!(e, Event::CheckpointTriggered { .. })) else {
        return false;
    };
    let copy = t.entries[i].clone();
    t.entries.insert(j + 1, copy);
    true
}

/// The last acknowledgement before a completion is lost.
fn drop_an_acknowledgement(t: &mut Trace) -> bool {
    let Some(done) = index_of(t, 0, |e| matches!(e, Event::CheckpointCompleted { .. })) else {
        return false;
    };
    let Event::CheckpointCompleted { checkpoint } = t.entries[done].event else {
        unreachable!()
    };
    let Some(ack) = (0..done).rev().find(|&i| {
        matches!(&t.entries[i].event, Event::CheckpointAcknowledged { checkpoint: c, .. } if *c == checkpoint)
    }) else {
        return false;
    };
    t.entries.remove(ack);
    true
}

/// A failover restarts fewer tasks than its region has.
fn shrink_a_failover(t: &mut Trace) -> bool {
    for e in &mut t.entries {
        if let Event::Failover { restarting, .. } = &mut e.event {
            *restarting = 1;
            return true;
        }
    }
    false
}

/// A committed (streaming) or written (batch) record is lost.
fn lose_a_record(t: &mut Trace) -> bool {
    let Some(i) = index_of(t, 0, |e| {
        matches!(e, Event::Commit { .. } | Event::Output { .. })
    }) else {
        return false;
    };
    // Drop every copy of it (re-commits included), so de-duplication cannot hide the loss.
    let victim = t.entries[i].event.clone();
    t.entries.retain(|e| e.event != victim);
    true
}

/// After a JobManager crash, the sink (never logged finished) is recovered FINISHED.
fn recover_an_unlogged_execution(t: &mut Trace) -> bool {
    let Some(i) = index_of(
        t,
        0,
        |e| matches!(e, Event::ExecutionState { from, to, .. } if from == "CREATED" && to == "FINISHED"),
    ) else {
        return false;
    };
    if index_of(t, 0, |e| matches!(e, Event::JobmasterLost { .. })).is_none_or(|c| c > i) {
        return false;
    }
    let mut fake = t.entries[i].clone();
    let Event::ExecutionState { subtask, .. } = &mut fake.event else {
        unreachable!()
    };
    *subtask = "sink[0]".into();
    t.entries.insert(i + 1, fake);
    true
}

/// A vertex deployed finished on restore is said to have emitted records.
fn emit_from_finished_on_restore(t: &mut Trace) -> bool {
    if !t
        .entries
        .iter()
        .any(|e| matches!(e.event, Event::Restore { .. }))
    {
        return false;
    }
    match t.header.vertices.iter_mut().find(|v| v.id == "short") {
        Some(v) => {
            v.records_out = Some(7);
            true
        }
        None => false,
    }
}

/// The job ends FAILED.
fn fail_the_job(t: &mut Trace) -> bool {
    let Some(i) = (0..t.entries.len())
        .rev()
        .find(|&i| matches!(t.entries[i].event, Event::JobStatus { .. }))
    else {
        return false;
    };
    if let Event::JobStatus { to, .. } = &mut t.entries[i].event {
        *to = "FAILED".into();
    }
    true
}

/// A late partition report moves before the JobMaster stopped waiting.
fn report_late_too_early(t: &mut Trace) -> bool {
    let Some(late) = index_of(t, 0, |e| matches!(e, Event::LateReport { .. })) else {
        return false;
    };
    let Some(classified) = index_of(t, 0, |e| matches!(e, Event::PartitionsRecovered { .. }))
    else {
        return false;
    };
    let entry = t.entries.remove(late);
    t.entries.insert(classified, entry);
    true
}

type Corruption = (&'static str, fn(&mut Trace) -> bool, &'static str);

const CORRUPTIONS: [Corruption; 14] = [
    (
        "release a report as late before the wait ended",
        report_late_too_early,
        "late-report-released",
    ),
    (
        "skip an execution's deployment",
        skip_deployment,
        "legal-transition",
    ),
    (
        "trigger a checkpoint id twice",
        reuse_a_checkpoint_id,
        "checkpoint-ids-increase",
    ),
    (
        "drop an acknowledgement before a completion",
        drop_an_acknowledgement,
        "complete-after-all-acks",
    ),
    (
        "restart fewer tasks than the region",
        shrink_a_failover,
        "failover-scope",
    ),
    (
        "lose a committed record",
        lose_a_record,
        "exactly-once-output",
    ),
    (
        "recover an execution never logged finished",
        recover_an_unlogged_execution,
        "recovered-as-logged",
    ),
    (
        "emit from a vertex finished on restore",
        emit_from_finished_on_restore,
        "finished-on-restore-emits-nothing",
    ),
    ("end the job FAILED", fail_the_job, "job-terminates"),
    (
        "drop the final checkpoint's completion",
        drop_final_completions,
        "final-checkpoint-before-finish",
    ),
    (
        "put an acknowledgement before its trigger",
        ack_before_trigger,
        "ack-after-trigger",
    ),
    (
        "trigger a finished subtask",
        trigger_a_finished_subtask,
        "trigger-plan",
    ),
    (
        "commit a record twice outside a re-commit",
        commit_twice,
        "recommit-only-after-restore",
    ),
    (
        "re-run a recovered execution",
        rerun_a_recovered_execution,
        "minimal-rerun",
    ),
];

#[test]
fn a_corrupted_copy_of_every_fixture_is_rejected_by_the_rule_it_breaks() {
    let mut applied = std::collections::BTreeMap::new();
    for (_, trace) in fixtures() {
        let original = load(&trace);
        let mut any = false;
        for (what, corrupt, rule) in CORRUPTIONS {
            let mut t = original.clone();
            if !corrupt(&mut t) {
                continue;
            }
            any = true;
            *applied.entry(what).or_insert(0) += 1;
            let report = check(&t).unwrap();
            assert!(
                rules(&report.departures).contains(&rule),
                "{} with {what}: expected {rule}, got {:#?}",
                trace.display(),
                report.departures
            );
        }
        assert!(any, "{}: no corruption applies", trace.display());
    }
    for (what, _, _) in CORRUPTIONS {
        assert!(applied.contains_key(what), "never applied: {what}");
    }
}

// ------------------------------------------------------------------ the command line

fn flinksim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .args(args)
        .output()
        .expect("flinksim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn a_run(job: &str) -> PathBuf {
    root().join("runs").join(job).join("run-1")
}

/// `import-flink-log` on `run`: exit 2, one error line naming `names`, no output file.
fn assert_bad_run(run: &Path, names: &str) {
    let out = tempfile::tempdir().unwrap();
    let trace = out.path().join("t.jsonl");
    let (code, stdout, stderr) = flinksim(&[
        "import-flink-log",
        run.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(names), "{stderr} should name {names}");
    assert!(!trace.exists(), "a partial output file was left");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn bad_runs_give_one_clear_error_and_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    // An empty directory.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_bad_run(&empty, "meta.json");
    // No such directory.
    assert_bad_run(&tmp.path().join("nowhere"), "nowhere");

    // A missing REST dump: the job's plan, and one checkpoint's subtask statistics.
    let run = tmp.path().join("no-job");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    std::fs::remove_file(run.join("rest/job.json.gz")).unwrap();
    assert_bad_run(&run, "job.json");
    let run = tmp.path().join("no-subtasks");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    let victim = std::fs::read_dir(run.join("rest"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("checkpoint-2-subtasks-"))
        .unwrap();
    std::fs::remove_file(&victim).unwrap();
    assert_bad_run(&run, "checkpoint-2-subtasks-");

    // A truncated log: a gzip'd one cut short, and a plain one cut mid-line.
    let run = tmp.path().join("truncated-gz");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    let log = run.join("logs/flink.log.gz");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() / 2]).unwrap();
    assert_bad_run(&run, "flink.log.gz");
    let run = tmp.path().join("truncated-plain");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    let text = flate2_text(&log_bytes("a-two-sources-2pc"));
    std::fs::remove_file(run.join("logs/flink.log.gz")).unwrap();
    std::fs::write(run.join("logs/flink.log"), &text[..text.len() - 40]).unwrap();
    assert_bad_run(&run, "truncated");

    // A log of another format (Flink 1.x's default pattern) and a run of another version.
    let run = tmp.path().join("other-format");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    std::fs::remove_file(run.join("logs/flink.log.gz")).unwrap();
    std::fs::write(
        run.join("logs/flink.log"),
        "2026-12-01 10:00:00,000 INFO  org.apache.flink.runtime.jobmaster.JobMaster [] - Starting\n",
    )
    .unwrap();
    assert_bad_run(&run, "log4j2 pattern");
    let run = tmp.path().join("other-version");
    copy_dir(&a_run("a-two-sources-2pc"), &run);
    let meta = std::fs::read_to_string(run.join("meta.json")).unwrap();
    std::fs::write(
        run.join("meta.json"),
        meta.replace("\"2.3.0\"", "\"1.20.0\""),
    )
    .unwrap();
    assert_bad_run(&run, "Flink 1.20.0");
}

fn log_bytes(job: &str) -> Vec<u8> {
    std::fs::read(a_run(job).join("logs/flink.log.gz")).unwrap()
}

fn flate2_text(gz: &[u8]) -> String {
    use std::io::Read;
    let mut s = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut s)
        .unwrap();
    s
}

#[test]
fn conform_exits_0_1_2() {
    let (_, trace) = fixtures()
        .into_iter()
        .find(|(_, t)| t.to_string_lossy().contains("a-two-sources-2pc-run-1"))
        .unwrap();
    let (code, stdout, _) = flinksim(&["conform", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 departures"), "{stdout}");

    let tmp = tempfile::tempdir().unwrap();
    let mut t = load(&trace);
    assert!(ack_before_trigger(&mut t));
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, t.to_text()).unwrap();
    let (code, stdout, _) = flinksim(&["conform", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("ack-after-trigger (P1.1)"), "{stdout}");
    assert!(stdout.contains("line "), "{stdout}");

    // A trace cut short (no import_summary), and one of another format version.
    let text = std::fs::read_to_string(&trace).unwrap();
    let cut = tmp.path().join("cut.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&cut, lines[..lines.len() - 1].join("\n")).unwrap();
    let (code, _, stderr) = flinksim(&["conform", cut.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cut.jsonl") && stderr.contains("truncated"),
        "{stderr}"
    );
    let other = tmp.path().join("other.jsonl");
    std::fs::write(
        &other,
        text.replace("flinksim-conform/1", "flinksim-conform/0"),
    )
    .unwrap();
    let (code, _, stderr) = flinksim(&["conform", other.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("other.jsonl:1"), "{stderr}");
}

#[test]
fn the_differential_compares_a_fixture_with_its_twin() {
    let (_, trace) = fixtures()
        .into_iter()
        .find(|(_, t)| {
            t.to_string_lossy()
                .contains("b-failover-after-source-finished-run-1")
        })
        .unwrap();
    let twin = root().join("scenarios/b-failover-after-source-finished.json");
    let (code, stdout, stderr) = flinksim(&[
        "conform",
        trace.to_str().unwrap(),
        "--scenario",
        twin.to_str().unwrap(),
        "--seeds",
        "0..3",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("outcomes agreeing: 5 of 5"), "{stdout}");
    assert!(stdout.contains("= finished on restore"), "{stdout}");
    assert!(stdout.contains("wall time: Flink"), "{stdout}");
}
