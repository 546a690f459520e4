//! Starting a job from a checkpoint (F1.6): `flinksim run --save-checkpoint` writes what a
//! scenario's `restore_from` reads, the shipped checkpoint file is what the command writes, a
//! restored run is deterministic, and what cannot be saved is refused with exit code 2 and no
//! file.

use flinksim::report::checkpoint_file::checkpoint_json;
use flinksim::run::{run, run_keeping, RunOptions};
use flinksim::scenario;
use flinksim::status::JobStatus;
use flinksim::trace::Retain;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options() -> RunOptions {
    RunOptions {
        seed: None,
        retain: Retain::Nothing,
        eager_sources: false,
    }
}

/// `scenarios/checkpoints/final-transaction-flink-3.json` is exactly checkpoint 3 of
/// `final-transaction-flink`, so the scenario that starts from it shows what the command
/// really writes.
#[test]
fn the_shipped_checkpoint_file_is_what_save_checkpoint_writes() {
    let s = scenario::load(&root().join("scenarios/final-transaction-flink.json")).expect("valid");
    let report = run_keeping(&s, &options(), Some(3));
    let saved = report
        .saved_checkpoint
        .as_ref()
        .expect("checkpoint 3 completed");
    let json = checkpoint_json(&report.graph, saved).expect("an aligned checkpoint");
    let file = root().join("scenarios/checkpoints/final-transaction-flink-3.json");
    let shipped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("shipped")).expect("JSON");
    assert_eq!(json, shipped);
    // Keeping a copy changes nothing in the run.
    assert_eq!(report.trace_hash, run(&s, &options()).trace_hash);
}

/// Save, restore, save again: a job started from checkpoint 3 and saving its first own
/// checkpoint writes a checkpoint that starts a job again, with the same output.
#[test]
fn a_saved_checkpoint_starts_a_job_that_commits_the_same_output() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let first = dir.path().join("cp3.json");
    let bin = env!("CARGO_BIN_EXE_flinksim");
    let out = Command::new(bin)
        .args([
            "run",
            "scenarios/final-transaction-flink.json",
            "--quiet",
            "--save-checkpoint",
            "3",
        ])
        .arg(&first)
        .current_dir(root())
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("scenarios/restore-from-saved-checkpoint.json"))
            .expect("shipped"),
    )
    .expect("JSON");
    doc["restore_from"] = serde_json::json!(first.file_name().unwrap().to_str().unwrap());
    doc["expect"] = serde_json::json!({});
    let restored = dir.path().join("restored.json");
    std::fs::write(&restored, doc.to_string()).expect("written");
    let s = scenario::load(&restored).expect("valid, the file beside it");
    let a = run_keeping(&s, &options(), Some(4));
    assert_eq!(a.status, JobStatus::Finished);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(a.committed_records, 16);
    assert_eq!(a.trace_hash, run(&s, &options()).trace_hash, "determinism");
    // Checkpoint 4, the restored job's first, starts a job too.
    let json = checkpoint_json(&a.graph, a.saved_checkpoint.as_ref().expect("4 completed"))
        .expect("aligned");
    doc["restore_from"] = json;
    let again = scenario::parse(&doc.to_string(), "again.json").expect("valid");
    let b = run(&again, &options());
    assert_eq!(b.status, JobStatus::Finished);
    assert!(b.violations.is_empty(), "{:?}", b.violations);
    assert_eq!(b.committed_records, 16);
}

/// What `--save-checkpoint` cannot do ends with exit code 2, one message, and no file.
#[test]
fn save_checkpoint_refuses_with_exit_code_2_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("cp.json");
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "scenarios/final-transaction-flink.json",
            &["x"],
            "expected a checkpoint id",
        ),
        (
            "scenarios/final-transaction-flink.json",
            &["999"],
            "checkpoint 999 did not complete",
        ),
        (
            "scenarios/unaligned-two-running-inputs.json",
            &["1"],
            "unaligned channel state",
        ),
    ];
    for (scenario, n, phrase) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_flinksim"))
            .args(["run", scenario, "--quiet", "--save-checkpoint", n[0]])
            .arg(&file)
            .current_dir(root())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{scenario} {n:?}: {stderr}");
        assert!(stderr.contains(phrase), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!Path::new(&file).exists(), "{scenario} {n:?} wrote a file");
    }
}
