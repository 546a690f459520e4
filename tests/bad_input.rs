//! Bad input reaches the user as one clear message and exit code 2, never as a panic or a
//! half-written output file. These tests drive the `flinksim` binary only, the way a user does.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary with `args` and returns what it did.
fn flinksim<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .args(args)
        .output()
        .expect("the flinksim binary starts")
}

/// Asserts exit code 2, no panic, and every phrase in stderr.
#[track_caller]
fn assert_bad_input(out: &Output, phrases: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "panicked:\n{stderr}");
    for phrase in phrases {
        assert!(
            stderr.contains(phrase),
            "stderr lacks {phrase:?}:\n{stderr}"
        );
    }
}

/// Asserts that the scenario `json` is refused at the JSON path `path` with a message containing
/// `phrase`, both by `validate` and by `run`, and that `run` wrote neither its trace nor its
/// summary.
#[track_caller]
fn reject(json: &str, path: &str, phrase: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("bad.json");
    std::fs::write(&file, json).expect("the scenario is written");
    let at = format!("at {path}: ");

    assert_bad_input(&flinksim([Path::new("validate"), &file]), &[&at, phrase]);

    let trace = dir.path().join("trace.jsonl");
    let summary = dir.path().join("summary.json");
    let out = flinksim([
        Path::new("run"),
        &file,
        Path::new("--trace"),
        &trace,
        Path::new("--summary"),
        &summary,
    ]);
    assert_bad_input(&out, &[&at, phrase]);
    assert!(!trace.exists(), "a trace was written for bad input");
    assert!(!summary.exists(), "a summary was written for bad input");
}

/// A streaming job `src` (source, 2) -> `sum` (keyed_sum, 2) -> `sink` (sink, 1) with the
/// given edges and extra top-level fields (`""` for none).
fn scenario(edges: &str, extra: &str) -> String {
    format!(
        r#"{{"name": "bad", "mode": "streaming", "job": {{
            "vertices": [
                {{"id": "src", "operator": "source", "parallelism": 2, "records": 10}},
                {{"id": "sum", "operator": "keyed_sum", "parallelism": 2}},
                {{"id": "sink", "operator": "sink", "parallelism": 1}}
            ],
            "edges": [{edges}]
        }}{extra}}}"#
    )
}

const GOOD_EDGES: &str = r#"{"from": "src", "to": "sum", "pattern": "all_to_all"},
                            {"from": "sum", "to": "sink", "pattern": "all_to_all"}"#;

/// The good job with `extra` (starting with a comma) added at the top level.
fn with(extra: &str) -> String {
    scenario(GOOD_EDGES, extra)
}

#[test]
fn malformed_json() {
    reject(
        r#"{"name": "t" "mode": "streaming"}"#,
        "1:14",
        "invalid JSON",
    );
    reject("", "1:0", "invalid JSON");
}

#[test]
fn wrong_shape() {
    reject("[]", "$", "expected a JSON object");
    reject(r#"{"name": "t"}"#, "$", "missing field `mode`");
    reject(
        &with(r#", "cluster": [2, 4]"#),
        "cluster",
        "expected a JSON object",
    );
}

#[test]
fn unknown_field() {
    reject(&with(r#", "sead": 7"#), "sead", "unknown field `sead`");
    reject(
        &with(r#", "network": {"latency": "1ms"}"#),
        "network.latency",
        "unknown field `latency`",
    );
}

#[test]
fn unknown_vertex() {
    reject(
        &scenario(
            r#"{"from": "src", "to": "summ", "pattern": "all_to_all"}"#,
            "",
        ),
        "job.edges[0].to",
        r#"unknown vertex "summ""#,
    );
}

#[test]
fn cycle() {
    let json = r#"{"name": "cycle", "mode": "streaming", "job": {
        "vertices": [
            {"id": "src", "operator": "source", "parallelism": 1},
            {"id": "a", "operator": "map", "parallelism": 1},
            {"id": "b", "operator": "map", "parallelism": 1}
        ],
        "edges": [
            {"from": "src", "to": "a", "pattern": "forward"},
            {"from": "a", "to": "b", "pattern": "forward"},
            {"from": "b", "to": "a", "pattern": "forward"}
        ]}}"#;
    reject(json, "job.edges[2]", "the edges form a cycle: a -> b -> a");
}

#[test]
fn zero_parallelism() {
    let json = scenario(GOOD_EDGES, "").replacen(r#""parallelism": 1"#, r#""parallelism": 0"#, 1);
    reject(&json, "job.vertices[2].parallelism", "between 1 and 100000");
}

#[test]
fn bad_duration() {
    reject(
        &with(r#", "network": {"channel_latency": "10 lightyears"}"#),
        "network.channel_latency",
        r#""10 lightyears" is not a duration"#,
    );
    reject(
        &with(r#", "network": {"rpc_latency": "5ms..1ms"}"#),
        "network.rpc_latency",
        "its minimum 5ms is above its maximum 1ms",
    );
    reject(
        &with(r#", "budget": {"max_time": "1ms..2ms"}"#),
        "budget.max_time",
        "takes one duration",
    );
}

#[test]
fn forward_edge_problems() {
    reject(
        &scenario(
            r#"{"from": "src", "to": "sum", "pattern": "all_to_all"},
               {"from": "sum", "to": "sink", "pattern": "forward", "partitioner": "round_robin"}"#,
            "",
        ),
        "job.edges[1].partitioner",
        "`partitioner` only applies to all_to_all edges",
    );
    reject(
        &scenario(
            r#"{"from": "src", "to": "sum", "pattern": "forward"},
               {"from": "sum", "to": "sink", "pattern": "all_to_all"}"#,
            "",
        ),
        "job.edges[0].pattern",
        "every input edge must be all_to_all with partitioner key_hash",
    );
}

#[test]
fn too_few_slots() {
    reject(
        &with(r#", "cluster": {"task_managers": 1, "slots_per_task_manager": 1}"#),
        "cluster.slots_per_task_manager",
        "the job needs 2",
    );
}

#[test]
fn unknown_expected_status_or_invariant() {
    reject(
        &with(r#", "expect": {"status": "DONE"}"#),
        "expect.status",
        r#"unknown job status "DONE""#,
    );
    reject(
        &with(r#", "expect": {"violations": ["exactly-once"]}"#),
        "expect.violations[0]",
        r#"unknown invariant "exactly-once""#,
    );
}

#[test]
fn unknown_bug() {
    reject(
        &with(r#", "bug": "eop-not-alligned""#),
        "bug",
        r#"unknown bug "eop-not-alligned"; expected null or one of: eop-not-aligned"#,
    );
}

#[test]
fn two_phase_commit_without_checkpointing() {
    let json = with("").replacen(
        r#""sink", "parallelism": 1"#,
        r#""sink", "parallelism": 1, "delivery": "two_phase_commit""#,
        1,
    );
    reject(
        &json,
        "job.vertices[2].delivery",
        "so it needs a `checkpointing` block",
    );
}

#[test]
fn max_concurrent_zero() {
    reject(
        &with(r#", "checkpointing": {"max_concurrent": 0}"#),
        "checkpointing.max_concurrent",
        "must be between 1 and 64",
    );
}

#[test]
fn unknown_subtask_in_expected_checkpoints() {
    reject(
        &with(
            r#", "checkpointing": {}, "expect": {"checkpoints": [{"id": 1, "triggered": ["src[0]", "src[2]"]}]}"#,
        ),
        "expect.checkpoints[0].triggered[1]",
        r#""src" has parallelism 2"#,
    );
}

#[test]
fn unknown_fault_kind() {
    reject(
        &with(r#", "faults": [{"at": "1ms", "fault": "kill_task"}]"#),
        "faults[0].fault",
        "unknown variant `kill_task`, expected one of `fail_task`",
    );
}

#[test]
fn unknown_subtask_in_a_fault() {
    reject(
        &with(r#", "faults": [{"at": "1ms", "fault": "fail_task", "task": "map[1]"}]"#),
        "faults[0].task",
        r#"unknown vertex "map" in "map[1]"; the vertices are "src", "sum", "sink""#,
    );
}

#[test]
fn task_manager_out_of_range() {
    reject(
        &with(r#", "faults": [{"at": "1ms", "fault": "lose_task_manager", "task_manager": 2}]"#),
        "faults[0].task_manager",
        "there is no task manager 2: cluster.task_managers is 2",
    );
}

#[test]
fn probability_above_one() {
    reject(
        &with(
            r#", "faults": [{"at": "1ms", "fault": "rpc_loss", "probability": 1.5, "duration": "10ms"}]"#,
        ),
        "faults[0].probability",
        "must be a number from 0 to 1, not 1.5",
    );
}

/// F1.11: `drain` is a boolean, and a stop needs aligned barriers under `flink`.
#[test]
fn stop_with_savepoint_bad_values() {
    reject(
        &with(r#", "faults": [{"at": "1ms", "fault": "stop_with_savepoint", "drain": "yes"}]"#),
        "faults[0].drain",
        "expected a boolean",
    );
    reject(
        &with(r#", "faults": [{"at": "1ms", "fault": "stop_with_savepoint"}]"#),
        "faults[0].fault",
        "needs a `checkpointing` block",
    );
}

#[test]
fn fault_with_both_at_and_when() {
    reject(
        &with(
            r#", "faults": [{"at": "1ms", "when": {"event_count": 10}, "fault": "crash_jobmaster"}]"#,
        ),
        "faults[0]",
        "has both `at` and `when`",
    );
}

/// F1.14: a bad network buffer setting is named by its path, from the CLI too.
#[test]
fn bad_network_buffers() {
    reject(
        &with(r#", "network": {"buffer_size": 32768, "record_bytes": 40000}"#),
        "network.record_bytes",
        "1 to network.buffer_size (32768)",
    );
    reject(
        &with(r#", "network": {"exclusive_buffers_per_channel": 2}"#),
        "network.exclusive_buffers_per_channel",
        "needs network.buffer_size",
    );
}

#[test]
fn unsupported_feature() {
    reject(
        &with("").replacen(
            r#""to": "sum", "pattern": "all_to_all"}"#,
            r#""to": "sum", "pattern": "all_to_all", "exchange": "blocking"}"#,
            1,
        ),
        "job.edges[0].exchange",
        "blocking exchanges in streaming mode are not implemented yet",
    );
}

#[test]
fn unreadable_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let missing = dir.path().join("missing.json");
    assert_bad_input(
        &flinksim([Path::new("validate"), &missing]),
        &["at $: ", "cannot read the file"],
    );
}

#[test]
fn unknown_cli_flag() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("ok.json");
    std::fs::write(&file, with("")).expect("the scenario is written");
    let trace = dir.path().join("trace.jsonl");
    let summary = dir.path().join("summary.json");
    let out = flinksim([
        Path::new("run"),
        &file,
        Path::new("--trace"),
        &trace,
        Path::new("--summary"),
        &summary,
        Path::new("--frobnicate"),
    ]);
    assert_bad_input(&out, &["--frobnicate"]);
    assert!(
        !trace.exists(),
        "a trace was written for a bad command line"
    );
    assert!(
        !summary.exists(),
        "a summary was written for a bad command line"
    );
    assert_bad_input(
        &flinksim([Path::new("validate"), Path::new("--frobnicate"), &file]),
        &["--frobnicate"],
    );
}

/// Sizes that `validate` used to accept and that then crashed, spun or exhausted memory in
/// `run`: each is now refused at the field that sizes the run.
#[test]
fn sizes_that_would_exhaust_a_run_are_refused() {
    reject(
        &with(r#", "cluster": {"task_managers": 1000000000}"#),
        "cluster.task_managers",
        "at most 10000",
    );
    reject(
        &with(r#", "cluster": {"task_managers": 1, "slots_per_task_manager": 1000000000}"#),
        "cluster.slots_per_task_manager",
        "at most 10000",
    );
    reject(
        &with(r#", "network": {"rpc_latency": "1ns..18446744073s"}"#),
        "network.rpc_latency",
        "longer than the longest duration",
    );
    reject(
        &with(r#", "budget": {"max_time": "18446744073s"}"#),
        "budget.max_time",
        "longer than the longest duration",
    );
    reject(
        &with(r#", "budget": {"max_events": 100000000000}"#),
        "budget.max_events",
        "must be between 1 and",
    );
    reject(
        &with(r#", "budget": {"max_pending": 0}"#),
        "budget.max_pending",
        "must be between 1 and",
    );
    reject(
        &with(r#", "network": {"channel_capacity": 4000000000}"#),
        "network.channel_capacity",
        "at most 1000000",
    );
    let wide = r#"{"name": "wide", "mode": "streaming", "job": {
        "vertices": [
            {"id": "src", "operator": "source", "parallelism": 3000, "records": 1},
            {"id": "sink", "operator": "sink", "parallelism": 3000}
        ],
        "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]}}"#;
    reject(wide, "job.edges", "9000000 channels");
}

/// A batch job whose sources would read 10^15 records inside single events, or keep 2^31
/// splits: refused before the run starts.
#[test]
fn batch_reading_is_bounded() {
    let batch = |records: &str, splits: &str| {
        format!(
            r#"{{"name": "b", "mode": "batch", "job": {{
                "vertices": [
                    {{"id": "src", "operator": "source", "parallelism": 2, "records": {records}}},
                    {{"id": "sink", "operator": "sink", "parallelism": 1}}
                ],
                "edges": [{{"from": "src", "to": "sink", "pattern": "all_to_all"}}]}},
              "batch": {{"coordinators": {{"src": {{"splits": {splits}}}}}}}}}"#
        )
    };
    reject(
        &batch("1000000000000000", "4"),
        "job.vertices[0].records",
        "at most 100000000",
    );
    reject(
        &batch("10", "2147483648"),
        "batch.coordinators.src.splits",
        "at most 1000000 splits",
    );
}

/// An expected re-run reason the summary never gives is named with its place and the reasons
/// it may be.
#[test]
fn unknown_rerun_reason() {
    let json = r#"{"name": "b", "mode": "batch", "job": {
            "vertices": [
                {"id": "src", "operator": "source", "parallelism": 2, "records": 10},
                {"id": "sink", "operator": "sink", "parallelism": 1}
            ],
            "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all"}]},
          "expect": {"recoveries": [{"rerun_reasons": {"event_lost": 1, "bad_luck": 2}}]}}"#;
    reject(
        json,
        "expect.recoveries[0].rerun_reasons.bad_luck",
        "unknown reason; expected one of event_lost, no_snapshot",
    );
}

/// `--trace`, `--summary` and `-o` never overwrite the command's own input, and two outputs
/// never share a file.
#[test]
fn outputs_never_overwrite_inputs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("s.json");
    let text = std::fs::read_to_string("scenarios/two-source-pipeline.json").expect("shipped");
    std::fs::write(&file, &text).expect("written");
    let run = |flag: &str, out: &Path| {
        flinksim([
            Path::new("run"),
            &file,
            Path::new("--quiet"),
            Path::new(flag),
            out,
        ])
    };
    assert_bad_input(&run("--trace", &file), &["would destroy the input"]);
    assert_bad_input(&run("--summary", &file), &["would destroy the input"]);
    let same = dir.path().join("out.json");
    let out = flinksim([
        Path::new("run"),
        &file,
        Path::new("--trace"),
        &same,
        Path::new("--summary"),
        &same,
    ]);
    assert_bad_input(&out, &["name the same file"]);
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), text);

    let trace = dir.path().join("t.jsonl");
    let ok = run("--trace", &trace);
    assert_eq!(ok.status.code(), Some(0));
    for command in ["view", "export"] {
        let mut args = vec![Path::new(command), &trace, Path::new("-o"), &trace];
        if command == "export" {
            args.extend([Path::new("--format"), Path::new("perfetto")]);
        }
        assert_bad_input(&flinksim(args), &["would destroy the input"]);
    }
}

/// `--max-trace-size` bounds the file: a `truncated` line, then the end line with the hash of
/// the whole run, which `replay` still checks.
#[test]
fn trace_files_are_bounded_and_still_replay() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("t.jsonl");
    let out = flinksim([
        "run",
        "scenarios/final-transaction-flink.json",
        "--quiet",
        "--trace",
        trace.to_str().expect("utf-8"),
        "--max-trace-size",
        "20KB",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds the first"));
    let text = std::fs::read_to_string(&trace).expect("written");
    assert!(text.len() < 22_000, "{} bytes", text.len());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[lines.len() - 2].contains(r#""type":"truncated""#));
    assert!(lines[lines.len() - 1].contains(r#""type":"end""#));
    let replay = flinksim(["replay", trace.to_str().expect("utf-8")]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    assert!(String::from_utf8_lossy(&replay.stdout).starts_with("identical"));
    assert_bad_input(
        &flinksim([
            "run",
            "scenarios/two-source-pipeline.json",
            "--max-trace-size",
            "lots",
        ]),
        &["write a size like"],
    );
}

/// Interrupted while writing a large `--trace`, `flinksim` removes the partial temporary file
/// and exits 130: nothing hidden of hundreds of megabytes stays behind.
#[cfg(unix)]
#[test]
fn an_interrupted_trace_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenario = dir.path().join("big.json");
    std::fs::write(
        &scenario,
        r#"{"name": "big", "mode": "streaming", "job": {"vertices": [
            {"id": "src", "operator": "source", "parallelism": 2, "records": "unbounded",
             "record_interval": "10us"},
            {"id": "sink", "operator": "sink", "parallelism": 2}],
            "edges": [{"from": "src", "to": "sink", "pattern": "all_to_all",
                       "partitioner": "round_robin"}]},
           "budget": {"max_time": "4s"}}"#,
    )
    .expect("written");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("created");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .args([
            Path::new("run"),
            &scenario,
            Path::new("--quiet"),
            Path::new("--trace"),
        ])
        .arg(out.join("t.jsonl"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    // Wait (bounded) until the temporary file exists, then interrupt.
    let started = std::time::Instant::now();
    while std::fs::read_dir(&out).expect("readable").next().is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no temporary file appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let status = child.wait().expect("ends");
    assert_eq!(status.code(), Some(130));
    let left: Vec<_> = std::fs::read_dir(&out).expect("readable").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
