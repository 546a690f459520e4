//! The teaching tools: `explain` cites the right rules, `export` writes valid Perfetto,
//! Mermaid and ShiViz (golden files under `tests/golden/`), trace files carry violations, and
//! `view` renders in headless Chromium a 50,000-event trace, a violation's marker, a batch run's
//! lanes and arrows, and two runs compared.

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn flinksim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("flinksim runs")
}

fn stdout_of(args: &[&str]) -> String {
    let out = flinksim(args);
    assert!(
        out.status.success(),
        "flinksim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `explain SCENARIO` must contain each of `expected`, in any order.
fn check_explain(scenario: &str, expected: &[&str]) {
    let path = format!("scenarios/{scenario}.json");
    let text = stdout_of(&["explain", &path]);
    for needle in expected {
        assert!(
            text.contains(needle),
            "explain {scenario}: missing {needle:?} in\n{text}"
        );
    }
}

/// A batch run is narrated in batch terms: its header names FLIP-383 recovery, its JobManager
/// crash cites what survives in a batch job (P2.3), its election the branch this run takes
/// (P2.4), and a network fault is not called a crash.
#[test]
fn explain_tells_a_batch_recovery_in_batch_terms() {
    let text = stdout_of(&["explain", "scenarios/batch-rpc-loss-during-recovery.json"]);
    assert!(
        text.contains("\nBatch job (P2): job recovery on (FLIP-383), failover: restart"),
        "{text}"
    );
    assert!(text
        .contains("Faults           P2.3: fault 0 of the scenario fires: the JobManager crashes"));
    assert!(
        text.contains("P2.4: JobManager 1 is elected (HA): it reads back the flushed job events")
    );
    assert!(text.contains("==> NETWORK FAULT\n"));
    assert!(
        !text.contains("P1.8: JobManager"),
        "no streaming rule for a batch crash"
    );
    assert!(
        !text.contains("completed checkpoints"),
        "a batch job has none"
    );
    let streaming = stdout_of(&[
        "explain",
        "scenarios/failover-jobmanager-crash-precommitted.json",
    ]);
    assert!(streaming.contains("P1.8: JobManager 1 is elected (HA): it reads the completed checkpoints from durable storage and restarts the job from the latest"), "{streaming}");
}

/// `--actor`, `--from` and `--to` narrow the narration to what a reader is after, and
/// `--numbers` gives each line the event number violations and trace files use.
#[test]
fn explain_filters_by_actor_and_time_and_numbers_its_lines() {
    let text = stdout_of(&[
        "explain",
        "scenarios/final-transaction-legacy.json",
        "--actor",
        "JobMaster,sink",
        "--from",
        "43.5ms",
        "--to",
        "44ms",
        "--numbers",
    ]);
    let narration = &text[..text.find("\nRules cited:").expect("the closing line")];
    let narrated: Vec<&str> = narration
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .collect();
    assert!(narrated.len() >= 3, "{text}");
    for line in &narrated {
        let words: Vec<&str> = line.split_whitespace().collect();
        let time = words[1].strip_suffix("ms").expect("a time in ms");
        let time: f64 = time.parse().expect("a number");
        assert!((43.5..=44.0).contains(&time), "outside the window: {line}");
        assert!(
            ["JobMaster", "sink"].contains(&words[2]),
            "another actor: {line}"
        );
    }
    // The violation is told at its event: the job's FINISHED, event 1688.
    let at = narrated
        .iter()
        .position(|l| l.contains("exactly-once-output: "))
        .expect("the violation inline");
    assert!(
        narrated[at].trim_start().starts_with("#1688 "),
        "{}",
        narrated[at]
    );
    assert!(
        narrated[at - 1].contains("job RUNNING → FINISHED"),
        "{}",
        narrated[at - 1]
    );
}

#[test]
fn explain_cites_barrier_insertion_before_end_of_partition() {
    check_explain(
        "case-barriers-and-eop",
        &[
            "P1.3 step 2: map[0] learned of checkpoint 1 by the barrier on slow[0]->map[0] while fast[0]->map[0] held EndOfPartition, so barrier 1 goes right before it",
            "P1.3 step 1: EndOfPartition is enqueued on fast[0]->map[0]",
            "P1.3 step 4: processed EndOfPartition from fast[0]->map[0]",
            "==> PLAN COMPUTED",
            "P1.1: plans checkpoint 1 from its own view of task status: trigger by RPC [slow[0]]; wait for 3 subtasks; finished [fast[0]]; fully finished vertices [fast]",
            "==> ALIGNMENT COMPLETE",
            "==> JOB FINISHED",
        ],
    );
    check_explain(
        "case-trigger-all-eop",
        &["P1.3 step 2: map[0] learned of checkpoint 1 by the trigger RPC while src[1]->map[0] held EndOfPartition"],
    );
}

#[test]
fn explain_cites_the_finish_protocols() {
    check_explain(
        "cascade-option1",
        &[
            "P1.2 option1: m1[0] had finished when its trigger for checkpoint 1 arrived",
            "This is re-trigger RPC #3 for checkpoint 1: the cascade finish problem",
        ],
    );
    check_explain(
        "trigger-races-finish-flink",
        &[
            "F1.2: checkpoint 2 ABORTED (trigger_missed_finished_task)",
            "F1.5 step 2: snapshot for checkpoint 1, the first checkpoint after its end of input: its final checkpoint",
            "==> FINAL CHECKPOINT",
            "F1.5 step 4: attempt 0 is FINISHED",
        ],
    );
    check_explain(
        "final-transaction-legacy",
        &[
            "P1.6 (legacy): checkpoint 1 ABORTED (declined_task_finishing)",
            "P1.2 legacy: does not trigger a checkpoint",
        ],
    );
    check_explain(
        "cascade-option2",
        &["P1.2 option2: sink[0] reports 'finishing' before emitting EndOfPartition"],
    );
}

#[test]
fn explain_cites_failover_and_channel_state() {
    check_explain(
        "failover-between-finishes",
        &[
            "==> CRASH",
            "==> FAILOVER",
            "==> RESTORE",
            "P1.8, F1.6: redeploys",
        ],
    );
    check_explain(
        "backpressure-unaligned-cap4",
        &[
            "P1.4: 4 records that arrived on",
            "become input channel state",
        ],
    );
}

#[test]
fn explain_is_deterministic_and_plain_without_colour() {
    let a = stdout_of(&["explain", "scenarios/failover-between-finishes.json"]);
    let b = stdout_of(&["explain", "scenarios/failover-between-finishes.json"]);
    assert_eq!(a, b);
    assert!(!a.contains('\u{1b}'), "NO_COLOR must suppress escapes");
    let coloured = stdout_of(&[
        "explain",
        "scenarios/two-source-pipeline.json",
        "--color",
        "always",
    ]);
    assert!(coloured.contains("\u{1b}["), "--color always colours");
    // `--step` never waits when stdin/stdout are not a terminal.
    let stepped = stdout_of(&["explain", "scenarios/two-source-pipeline.json", "--step"]);
    assert!(stepped.contains("==> JOB FINISHED"));
}

/// A routine step's reason is given the first time, then only what happened: in a failover
/// run barriers are forwarded dozens of times, and "everything it sent before belongs to
/// checkpoint N" is said once per rule; a different reason for the same rule is still given.
#[test]
fn explain_gives_each_reason_once_then_in_short() {
    let text = stdout_of(&["explain", "scenarios/failover-between-finishes.json"]);
    let forwards = text.matches("P1.4: forwards barrier").count();
    assert!(forwards > 20, "{forwards} forwarded barriers in\n{text}");
    assert_eq!(
        text.matches("everything it sent before belongs to checkpoint")
            .count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.matches("(a source is always triggered by RPC)")
            .count(),
        1,
        "{text}"
    );
    // The reason is given in full at its first occurrence, and the short form is a prefix.
    let first = text.find("P1.4: forwards barrier").unwrap();
    assert!(text[first..].starts_with("P1.4: forwards barrier 1 on src[1]->sum[0]: everything"));
    assert!(
        text.contains("P1.4: forwards barrier 1 on src[1]->sum[1]\n"),
        "{text}"
    );
}

/// `--brief` keeps the key moments and the violations, and no alignment that took no time.
#[test]
fn explain_brief_keeps_key_moments_and_violations_only() {
    let full = stdout_of(&["explain", "scenarios/failover-between-finishes.json"]);
    let brief = stdout_of(&[
        "explain",
        "scenarios/failover-between-finishes.json",
        "--brief",
    ]);
    let body = |t: &str| -> Vec<String> {
        t.lines()
            .skip_while(|l| !l.is_empty())
            .take_while(|l| !l.starts_with("Rules cited"))
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (full, brief) = (body(&full), body(&brief));
    let markers = |b: &[String]| b.iter().filter(|l| l.starts_with("==> ")).count();
    assert!(markers(&brief) >= 10, "{brief:#?}");
    assert_eq!(markers(&brief), markers(&full));
    // Every line is a marker or the key moment right after it.
    assert_eq!(brief.len(), 2 * markers(&brief), "{brief:#?}");
    assert!(
        brief.len() * 5 < full.len(),
        "{} of {}",
        brief.len(),
        full.len()
    );
    assert!(
        !brief.iter().any(|l| l.contains(" after 0ns")),
        "{brief:#?}"
    );
    assert!(full
        .iter()
        .any(|l| l.contains("aligned checkpoint") && l.contains(" after 0ns")));
    // A violation is a key moment too.
    let broken = stdout_of(&[
        "explain",
        "scenarios/reconcile-refused-burst.json",
        "--bug",
        "drop-refused-rpc",
        "--brief",
    ]);
    assert!(broken.contains("==> VIOLATION\n"), "{broken}");
}

/// Where the run departs from a rule the narration says so from the trace's facts: under
/// `drop-refused-rpc` a kept RPC never arrives again; without the bug it says when it does.
#[test]
fn explain_says_whether_a_kept_rpc_was_sent_again() {
    let args = ["explain", "scenarios/reconcile-refused-burst.json"];
    let right = stdout_of(&args);
    assert!(
        right.contains("P3.3: keeps an RPC about src[1]; it arrives again at "),
        "{right}"
    );
    assert!(
        !right.contains("never reaches a JobMaster again"),
        "{right}"
    );
    let broken = stdout_of(&[args[0], args[1], "--bug", "drop-refused-rpc"]);
    assert!(
        broken.contains(
            "P3.3: keeps an RPC about src[1]; in this run it never reaches a JobMaster again"
        ),
        "{broken}"
    );
}

/// An alignment told from the facts: under `no-barrier-before-eop` the task aligns while an
/// enqueued EndOfPartition still has records ahead of it, and the narration names the channel
/// and the departure from P1.3 step 2; the same scenario without the bug, and a task that
/// snapshots at once on a trigger RPC with open inputs (F1.4), claim none.
#[test]
fn explain_names_an_alignment_that_skipped_a_buffered_end_of_partition() {
    let scenario = "scenarios/case-barriers-and-eop.json";
    let broken = stdout_of(&["explain", scenario, "--bug", "no-barrier-before-eop"]);
    assert!(
        broken.contains("P1.3 step 2: aligned checkpoint 1 after 0ns and snapshots now, though fast[0]->map[0] had EndOfPartition enqueued with neither barrier 1 nor that EndOfPartition taken"),
        "{broken}"
    );
    for clean in [scenario, "scenarios/trigger-rpc-open-inputs-flink.json"] {
        let text = stdout_of(&["explain", clean]);
        assert!(!text.contains("a departure from"), "{clean}: {text}");
    }
}

/// `explain --trace FILE` narrates the run a trace file recorded (a reproducer, a shrunk
/// counterexample) exactly as its scenario and seed would be, and refuses a file whose trace
/// this version does not reproduce.
#[test]
fn explain_narrates_a_recorded_trace() {
    let (dir, trace) = traced("failover-between-finishes");
    let from_trace = stdout_of(&["explain", "--trace", &trace]);
    let from_scenario = stdout_of(&["explain", "scenarios/failover-between-finishes.json"]);
    let body = |t: &str| {
        t.lines()
            .skip(1)
            .take_while(|l| !l.starts_with("reproduce"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&from_trace), body(&from_scenario));
    assert!(from_trace.contains(&format!("reproduce    flinksim explain --trace {trace}")));
    // A file whose end hash is not this run's.
    let text = std::fs::read_to_string(&trace).unwrap();
    let end = text.lines().last().unwrap();
    let at = end.find("\"trace_hash\":\"0x").unwrap() + "\"trace_hash\":\"0x".len();
    let digit = if &end[at..=at] == "0" { "1" } else { "0" };
    let forged = text.replace(end, &format!("{}{digit}{}", &end[..at], &end[at + 1..]));
    let bad = dir.path().join("forged.jsonl");
    std::fs::write(&bad, forged).unwrap();
    let out = flinksim(&["explain", "--trace", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not the run this version makes of its header"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "nothing narrated: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A scenario and a trace together are refused by the argument parser.
    let both = flinksim(&[
        "explain",
        "--trace",
        &trace,
        "scenarios/failover-between-finishes.json",
    ]);
    assert_eq!(both.status.code(), Some(2));
}

/// The committed input of the export golden tests (recorded once from
/// `tests/golden/small-checkpoint.json`, so a change to the model does not move the goldens).
const GOLDEN_TRACE: &str = "tests/golden/small-checkpoint.trace.jsonl";

/// Compares `actual` with the golden file `name`; `UPDATE_GOLDEN=1` rewrites it instead.
fn check_golden(name: &str, actual: &str) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the export at line {} (UPDATE_GOLDEN=1 rewrites it)\nexpected: {:?}\nactual:   {:?}",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

#[test]
fn export_goldens() {
    let perfetto = stdout_of(&["export", GOLDEN_TRACE, "--format", "perfetto"]);
    check_golden("small-checkpoint.perfetto.json", &perfetto);
    validate_perfetto(&perfetto);
    let mermaid = stdout_of(&["export", GOLDEN_TRACE, "--format", "mermaid"]);
    check_golden("small-checkpoint.mmd", &mermaid);
    let window = stdout_of(&[
        "export",
        GOLDEN_TRACE,
        "--format",
        "mermaid",
        "--from",
        "4ms",
        "--to",
        "8ms",
        "--actors",
        "Checkpointing,map[0],sink[0],b[0]",
    ]);
    check_golden("small-checkpoint.window.mmd", &window);
    let shiviz = stdout_of(&["export", GOLDEN_TRACE, "--format", "shiviz"]);
    check_golden("small-checkpoint.shiviz.log", &shiviz);
    validate_shiviz(&shiviz);
}

/// Checks the trace-event rules Perfetto relies on: every flow id has exactly one start and
/// one finish, at or after it; every async span id exactly one begin and one end; per thread,
/// `B`/`E` pairs match by name in a stack and every slice (`B`/`E` or `X`) nests properly in
/// the others.
fn validate_perfetto(text: &str) {
    use std::collections::HashMap;
    let doc: serde_json::Value = serde_json::from_str(text).expect("perfetto export is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    assert!(!events.is_empty());
    let mut flows: HashMap<u64, (u32, u32, f64, f64)> = HashMap::new();
    let mut spans: HashMap<u64, (u32, u32)> = HashMap::new();
    let mut stacks: HashMap<(u64, u64), Vec<(String, f64)>> = HashMap::new();
    let mut slices: HashMap<(u64, u64), Vec<(f64, f64)>> = HashMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        let thread = (
            e["pid"].as_u64().expect("pid"),
            e["tid"].as_u64().expect("tid"),
        );
        match ph {
            "s" | "f" => {
                let f = flows.entry(e["id"].as_u64().expect("flow id")).or_default();
                if ph == "s" {
                    f.0 += 1;
                    f.2 = ts;
                } else {
                    f.1 += 1;
                    f.3 = ts;
                    assert_eq!(e["bp"], "e", "a flow finish binds to its enclosing slice");
                }
            }
            "b" | "e" => {
                let s = spans.entry(e["id"].as_u64().expect("span id")).or_default();
                if ph == "b" {
                    s.0 += 1;
                } else {
                    s.1 += 1;
                }
            }
            "B" => stacks
                .entry(thread)
                .or_default()
                .push((e["name"].as_str().unwrap().to_owned(), ts)),
            "E" => {
                let (name, begin) = stacks
                    .entry(thread)
                    .or_default()
                    .pop()
                    .unwrap_or_else(|| panic!("E without B on {thread:?}: {e}"));
                assert_eq!(
                    name,
                    e["name"].as_str().unwrap(),
                    "E closes the innermost B"
                );
                assert!(begin <= ts, "a slice ends after it begins: {e}");
                slices.entry(thread).or_default().push((begin, ts));
            }
            "X" => {
                let dur = e["dur"].as_f64().expect("X has dur");
                assert!(dur >= 0.0);
                slices.entry(thread).or_default().push((ts, ts + dur));
            }
            "M" | "i" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    for (id, (starts, finishes, s, f)) in &flows {
        assert_eq!((*starts, *finishes), (1, 1), "flow {id}");
        assert!(s <= f, "flow {id} finishes before it starts");
    }
    for (id, counts) in &spans {
        assert_eq!(*counts, (1, 1), "async span {id}");
    }
    for (thread, stack) in &stacks {
        assert!(stack.is_empty(), "unclosed B on {thread:?}: {stack:?}");
    }
    for (thread, list) in &mut slices {
        // Laminar: sorted by start (longest first on ties), each slice lies within or after
        // the ones still open.
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut open: Vec<f64> = Vec::new();
        for &(begin, end) in list.iter() {
            while open.last().is_some_and(|&top| top < begin) {
                open.pop();
            }
            if let Some(&top) = open.last() {
                assert!(
                    end <= top,
                    "slices overlap on {thread:?}: [{begin}, {end}] crosses one ending at {top}"
                );
            }
            open.push(end);
        }
    }
}

/// Every ShiViz line matches the documented regex's shape, and each host's own clock entry
/// counts its lines 1, 2, 3, ….
fn validate_shiviz(text: &str) {
    use std::collections::HashMap;
    // ShiViz's upload format: the parsing regex, the execution delimiter (none), the log.
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(flinksim::report::export::shiviz::REGEX));
    assert_eq!(lines.next(), Some(""));
    let mut seen: HashMap<String, u64> = HashMap::new();
    for line in lines {
        let (host, rest) = line.split_once(' ').expect("host, then clock");
        let end = rest.find('}').expect("clock ends") + 1;
        let clock: HashMap<String, u64> = serde_json::from_str(&rest[..end]).expect("clock JSON");
        let n = seen.entry(host.to_owned()).or_default();
        *n += 1;
        assert_eq!(clock[host], *n, "{line}");
    }
}

#[test]
fn export_validates_on_live_runs_and_refuses_large_diagrams() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let trace = trace.to_str().unwrap();
    for scenario in [
        "failover-between-finishes",
        "case-unaligned-barriers-and-eop",
    ] {
        stdout_of(&[
            "run",
            &format!("scenarios/{scenario}.json"),
            "--quiet",
            "--trace",
            trace,
        ]);
        validate_perfetto(&stdout_of(&["export", trace, "--format", "perfetto"]));
        validate_perfetto(&stdout_of(&[
            "export", trace, "--format", "perfetto", "--from", "20ms", "--to", "40ms",
        ]));
        validate_shiviz(&stdout_of(&["export", trace, "--format", "shiviz"]));
        let refused = flinksim(&["export", trace, "--format", "mermaid"]);
        assert_eq!(refused.status.code(), Some(2));
        let message = String::from_utf8_lossy(&refused.stderr);
        assert!(message.contains("more than the 150"), "{message}");
    }
}

/// Runs `scenarios/{name}.json` with `--trace` into a fresh directory (kept alive by the
/// returned guard) and returns the trace's path.
fn traced(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl").to_str().unwrap().to_owned();
    let scenario = format!("scenarios/{name}.json");
    stdout_of(&["run", &scenario, "--quiet", "--trace", &trace]);
    (dir, trace)
}

/// The lifelines a Mermaid diagram declares, in order, by their shown names.
fn lifelines(diagram: &str) -> Vec<&str> {
    diagram
        .lines()
        .filter_map(|l| l.trim().strip_prefix("participant "))
        .map(|l| l.split(" as ").nth(1).unwrap_or(l))
        .collect()
}

/// A Mermaid window keeps a message sent before `--from` and received in it (the cascade's
/// `triggerMissed`, sent at 17 ms, arrives at 22 ms), and lays the lifelines out JobMaster,
/// TaskManagers, then tasks in topological order.
#[test]
fn mermaid_keeps_messages_crossing_the_window_and_orders_lifelines() {
    let (_dir, trace) = traced("cascade-option1");
    let trace = trace.as_str();
    let diagram = stdout_of(&[
        "export", trace, "--format", "mermaid", "--from", "17.1ms", "--to", "25ms",
    ]);
    assert!(
        diagram.contains("TaskManager0->>Checkpointing: triggerMissed(m1[0], checkpoint=1)"),
        "{diagram}"
    );
    assert_eq!(
        lifelines(&diagram),
        [
            "JobMaster",
            "Checkpointing",
            "TaskManager0",
            "ticker[0]",
            "ticks[0]"
        ]
    );
    let start = stdout_of(&[
        "export", trace, "--format", "mermaid", "--from", "5ms", "--to", "6ms",
    ]);
    assert_eq!(
        lifelines(&start),
        [
            "JobMaster",
            "TaskManager0",
            "src[0]",
            "m1[0]",
            "m2[0]",
            "m3[0]",
            "sink[0]",
            "ticker[0]",
            "ticks[0]"
        ]
    );
}

/// Perfetto places a batch job's tasks in the TaskManagers they were deployed to (its
/// `deployed` events) and sorts each process's lanes: the JobMaster's first, then the tasks in
/// topological order.
#[test]
fn perfetto_places_batch_tasks_in_their_taskmanagers_in_order() {
    let (_dir, trace) = traced("batch-crash-mid-stage");
    let trace = trace.as_str();
    let text = stdout_of(&["export", trace, "--format", "perfetto"]);
    validate_perfetto(&text);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let meta: Vec<&serde_json::Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M")
        .collect();
    let names = |kind: &str, pid: u64| -> Vec<(u64, String)> {
        let mut lanes: Vec<(u64, String)> = meta
            .iter()
            .filter(|e| e["name"] == kind && e["pid"] == pid)
            .map(|e| {
                let tid = e["tid"].as_u64().unwrap();
                let index = meta
                    .iter()
                    .find(|m| {
                        m["name"] == "thread_sort_index" && m["pid"] == pid && m["tid"] == tid
                    })
                    .map_or(0, |m| m["args"]["sort_index"].as_u64().unwrap());
                (index, e["args"]["name"].as_str().unwrap().to_owned())
            })
            .collect();
        lanes.sort();
        lanes
    };
    let processes: Vec<String> = meta
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !processes.iter().any(|p| p == "not deployed"),
        "{processes:?}"
    );
    let order: Vec<String> = names("thread_name", 100)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    // The TaskManager's own thread (its leader lost and found, its partition reports) first.
    assert_eq!(
        order,
        ["TaskManager0", "src[0]", "map[0]", "agg[0]", "sink[0]"]
    );
    let jm: Vec<String> = names("thread_name", 1)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(jm[..2], ["JobMaster", "Checkpointing"]);
}

/// A run of more than 50,000 trace events: two parallel pipelines of 5,000 records each.
const BIG_SCENARIO: &str = r#"{
  "name": "viewer-50k",
  "description": "A run big enough to test the viewer's windowing: two parallel pipelines of 5000 records each, checkpointed every 20ms.",
  "seed": 1,
  "mode": "streaming",
  "job": {
    "vertices": [
      { "id": "src", "operator": "source", "parallelism": 2, "records": 5000, "record_interval": "20us" },
      { "id": "map", "operator": "map", "parallelism": 2 },
      { "id": "sink", "operator": "sink", "parallelism": 2 }
    ],
    "edges": [
      { "from": "src", "to": "map", "pattern": "forward" },
      { "from": "map", "to": "sink", "pattern": "forward" }
    ]
  },
  "cluster": { "task_managers": 2 },
  "network": { "channel_latency": "50us", "rpc_latency": "1ms", "channel_capacity": 16 },
  "checkpointing": { "interval": "20ms", "finish_protocol": "option1" },
  "expect": { "status": "FINISHED", "violations": [] }
}"#;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Loads `url` in headless Chromium and returns the DOM after its scripts ran, and how long
/// Chromium took.
fn chromium_dom(url: &str) -> (String, std::time::Duration) {
    let profile = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ])
        .output()
        .expect("chromium runs");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), took)
}

/// The value of attribute `name` in the first tag of `dom` that contains `anchor`.
fn attribute(dom: &str, anchor: &str, name: &str) -> String {
    let at = dom
        .find(anchor)
        .unwrap_or_else(|| panic!("{anchor} not in the page"));
    let tag = &dom[at..at + dom[at..].find('>').unwrap()];
    let key = format!("{name}=\"");
    let start = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    let value = &tag[start..start + tag[start..].find('"').unwrap()];
    value.replace("&gt;", ">").replace("&amp;", "&")
}

/// What the page must show after event `step`: replays the trace's task states, channel
/// elements and checkpoints.
struct Expected {
    tasks: Vec<(String, String)>,
    pending: Vec<u64>,
    in_flight_records: std::collections::BTreeMap<String, i64>,
}

fn expected_after(events: &[serde_json::Value], step: usize) -> Expected {
    use std::collections::BTreeMap;
    let mut tasks: Vec<(String, String)> = Vec::new();
    let mut pending = Vec::new();
    let mut flight: BTreeMap<String, i64> = BTreeMap::new();
    for e in &events[..=step] {
        let s = |k: &str| e[k].as_str().unwrap_or("").to_owned();
        let record = e["element"]["kind"] == "record";
        match e["type"].as_str().unwrap() {
            "task_state" => match tasks.iter_mut().find(|(t, _)| *t == s("task")) {
                Some(entry) => entry.1 = s("to"),
                None => tasks.push((s("task"), s("to"))),
            },
            "push" if record => *flight.entry(s("channel")).or_default() += 1,
            "arrive" if record => *flight.entry(s("channel")).or_default() -= 1,
            "checkpoint_triggered" => pending.push(e["checkpoint"].as_u64().unwrap()),
            "checkpoint_completed" | "checkpoint_aborted" => {
                pending.retain(|&n| n != e["checkpoint"].as_u64().unwrap())
            }
            _ => {}
        }
    }
    Expected {
        tasks,
        pending,
        in_flight_records: flight,
    }
}

#[test]
fn viewer_renders_a_50k_event_trace_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("big.json");
    std::fs::write(&scenario, BIG_SCENARIO).unwrap();
    let trace = dir.path().join("big.jsonl");
    let html = dir.path().join("big.html");
    let (scenario, trace, html) = (
        scenario.to_str().unwrap(),
        trace.to_str().unwrap(),
        html.to_str().unwrap(),
    );
    stdout_of(&["run", scenario, "--quiet", "--trace", trace]);
    stdout_of(&["view", trace, "-o", html]);
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        !page.contains("http://")
            || page
                .matches("http://")
                .all(|_| page.contains("http://www.w3.org/2000/svg")),
        "the page loads nothing from the network"
    );
    assert!(!page.contains("https://") && !page.contains("<script src") && !page.contains("<link"));

    let events: Vec<serde_json::Value> = std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] != "header" && v["type"] != "end" && v["type"] != "violation")
        .collect();
    assert!(events.len() >= 50_000, "only {} events", events.len());

    if !std::path::Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("FLINKSIM_SKIP_BROWSER").is_some(),
            "{CHROMIUM} is missing: the viewer test needs Debian's chromium (apt-get install -y chromium; .ci/run installs it), or FLINKSIM_SKIP_BROWSER=1 to skip this check deliberately"
        );
        eprintln!("FLINKSIM_SKIP_BROWSER is set: the page was built but not rendered");
        return;
    }
    // A step a few events after the second checkpoint was triggered, so one is pending.
    let triggered = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] == "checkpoint_triggered")
        .nth(1)
        .expect("a second checkpoint")
        .0;
    let step = triggered + 3;
    let (dom, took) = chromium_dom(&format!("file://{html}#step={step}"));
    let status = "id=\"flinksim-status\"";
    assert_eq!(
        attribute(&dom, status, "data-events"),
        events.len().to_string()
    );
    assert_eq!(attribute(&dom, status, "data-step"), step.to_string());
    assert_eq!(
        attribute(&dom, status, "data-time"),
        events[step]["time_ns"].to_string()
    );
    let expected = expected_after(&events, step);
    let pending: Vec<String> = expected.pending.iter().map(u64::to_string).collect();
    assert_eq!(attribute(&dom, status, "data-pending"), pending.join(" "));
    assert!(!pending.is_empty());
    for (task, state) in &expected.tasks {
        let anchor = format!("data-task=\"{task}\"");
        assert_eq!(&attribute(&dom, &anchor, "data-state"), state, "{task}");
    }
    for (channel, records) in &expected.in_flight_records {
        let anchor = format!("data-channel=\"{}\"", channel.replace('>', "&gt;"));
        let shown = attribute(&dom, &anchor, "data-flight");
        let want = if *records > 0 {
            format!("{records} rec")
        } else {
            String::new()
        };
        assert!(
            shown.starts_with(&want),
            "{channel}: shows {shown:?}, expected {want:?}"
        );
    }
    let drawn: usize = attribute(&dom, status, "data-drawn").parse().unwrap();
    assert!(
        drawn > 0 && drawn <= 4000,
        "drew {drawn} elements: the window must bound it"
    );
    let load_ms: f64 = attribute(&dom, status, "data-load-ms").parse().unwrap();
    eprintln!(
        "viewer: {} events, page script {load_ms} ms, chromium {took:?}",
        events.len()
    );
    assert!(load_ms < 3000.0, "the page took {load_ms} ms to render");
    assert!(took.as_secs() < 15, "chromium took {took:?}");
    assert!(
        !dom.contains("data-errors"),
        "the page reported script errors"
    );
    // Zoomed out over the whole run with records on, the page says what it left out.
    let (dom, _) = chromium_dom(&format!("file://{html}#step={step}&zoom=100000&records=1"));
    let hidden = attribute(&dom, status, "data-hidden");
    assert!(
        hidden.contains("hidden") || hidden.contains("elements drawn; zoom in"),
        "a zoomed-out large trace says what it hides: {hidden:?}"
    );
    assert!(
        attribute(&dom, status, "data-ticks")
            .parse::<u32>()
            .unwrap()
            >= 4
    );
}

/// Runs `scenario` with `--trace` into `dir`, returns the trace's path.
fn trace_of(dir: &std::path::Path, scenario: &str, name: &str) -> String {
    let trace = dir.join(name).to_str().unwrap().to_owned();
    let out = flinksim(&["run", scenario, "--quiet", "--trace", &trace]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    trace
}

/// Issue 16 item 2: a violation is a line of the trace file right after the event where its
/// oracle first saw it, `replay` reproduces the lines, violations included, and `view` marks
/// it (in a real browser: the marker is drawn, the list jumps to it, no script error).
#[test]
fn violations_are_trace_lines_and_the_viewer_marks_them() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_of(
        dir.path(),
        "scenarios/final-transaction-legacy.json",
        "v.jsonl",
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = lines
        .iter()
        .position(|l| l["type"] == "violation")
        .expect("the legacy run's violation is in the file");
    let violation = &lines[at];
    assert_eq!(violation["id"], "exactly-once-output");
    assert_eq!(
        lines[at - 1]["index"],
        violation["event_index"],
        "the line follows the event where the violation was first seen"
    );
    assert_eq!(lines[at - 1]["time_ns"], violation["time_ns"]);
    let replay = stdout_of(&["replay", &trace]);
    assert!(replay.starts_with("identical"), "{replay}");
    // A changed violation is a divergence replay reports.
    let edited = dir.path().join("edited.jsonl");
    let text = std::fs::read_to_string(&trace)
        .unwrap()
        .replace("exactly-once-output", "consistent-cut");
    std::fs::write(&edited, text).unwrap();
    let out = flinksim(&["replay", edited.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("line {}", at + 1)),
        "{out:?}"
    );

    // Bounded before the violation's event, the file keeps the violation after its
    // `truncated` line, and replays the same.
    let bounded = dir
        .path()
        .join("bounded.jsonl")
        .to_str()
        .unwrap()
        .to_owned();
    let out = flinksim(&[
        "run",
        "scenarios/final-transaction-legacy.json",
        "--quiet",
        "--trace",
        &bounded,
        "--max-trace-size",
        "20KB",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&bounded).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .rev()
        .take(3)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(kinds, ["\"end\"", "\"violation\"", "\"truncated\""]);
    let replay = stdout_of(&["replay", &bounded]);
    assert!(replay.starts_with("identical"), "{replay}");

    let html = dir.path().join("v.html").to_str().unwrap().to_owned();
    stdout_of(&["view", &trace, "-o", &html]);
    if !std::path::Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("FLINKSIM_SKIP_BROWSER").is_some(),
            "{CHROMIUM} is missing"
        );
        return;
    }
    let index = violation["event_index"].as_u64().unwrap();
    let (dom, _) = chromium_dom(&format!("file://{html}#step={index}"));
    let status = "id=\"flinksim-status\"";
    assert!(!dom.contains("data-errors"), "script errors");
    assert_eq!(attribute(&dom, status, "data-violations"), "1");
    assert_eq!(attribute(&dom, status, "data-violations-marked"), "1");
    assert_eq!(
        attribute(&dom, "class=\"ev violation-marker\"", "data-violation"),
        "exactly-once-output"
    );
    assert_eq!(
        attribute(&dom, "class=\"goto-violation\"", "data-i"),
        index.to_string(),
        "the list jumps to the event"
    );
}

/// Issue 16 item 4 for batch runs: TaskManager lanes with their tasks in topological order,
/// deployments, partition reports and reads as arrows, the JobManager outage shaded and the
/// job event log shown; checked in a real browser.
#[test]
fn viewer_draws_a_batch_run_with_lanes_arrows_and_the_event_log() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_of(
        dir.path(),
        "scenarios/batch-crash-mid-stage.json",
        "b.jsonl",
    );
    let html = dir.path().join("b.html").to_str().unwrap().to_owned();
    stdout_of(&["view", &trace, "-o", &html]);
    // The page is a function of the trace: written twice, byte for byte the same.
    let again = dir.path().join("again.html").to_str().unwrap().to_owned();
    stdout_of(&["view", &trace, "-o", &again]);
    assert_eq!(
        std::fs::read(&html).unwrap(),
        std::fs::read(&again).unwrap()
    );
    // Perfetto: the batch messages are flows that satisfy the format's rules.
    let perfetto = stdout_of(&["export", &trace, "--format", "perfetto"]);
    validate_perfetto(&perfetto);
    for flow in ["rpc:deploy", "rpc:reportPartition", "partition read"] {
        assert!(
            perfetto.contains(&format!("\"ph\":\"s\",\"name\":\"{flow}\"")),
            "no {flow} flow"
        );
    }
    if !std::path::Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("FLINKSIM_SKIP_BROWSER").is_some(),
            "{CHROMIUM} is missing"
        );
        return;
    }
    // Zoomed out over the whole run, just after the new JobMaster was elected.
    let (dom, _) = chromium_dom(&format!("file://{html}#step=135&zoom=1000"));
    let status = "id=\"flinksim-status\"";
    assert!(!dom.contains("data-errors"), "script errors");
    assert_eq!(
        attribute(&dom, status, "data-lanes"),
        "JobMaster|Faults|TaskManager0|src[0]|map[0]|agg[0]|sink[0]|TaskManager1|src[1]|map[1]|agg[1]|TaskManager2|src[2]|map[2]|agg[2]"
    );
    let arrows = attribute(&dom, status, "data-arrows");
    for class in ["D:", "R:", "P:"] {
        assert!(arrows.contains(class), "no {class} arrows in {arrows:?}");
    }
    assert!(
        dom.contains("class=\"shade shade-outage\""),
        "the JobManager outage is shaded"
    );
    assert_eq!(
        attribute(&dom, status, "data-event-log"),
        "11 flushed 0 buffered"
    );
    assert!(
        attribute(&dom, status, "data-ticks")
            .parse::<u32>()
            .unwrap()
            >= 4
    );
}

/// The viewer's shaded windows: a JobManager outage on the JobMaster lane until the election,
/// a disconnected TaskManager on its lane until it reconnects, a delay spike across every lane
/// for its duration; and the shuffle service's lane in a run with remote partitions.
#[test]
fn viewer_shades_outages_and_fault_windows() {
    let dir = tempfile::tempdir().unwrap();
    let data = |scenario: &str| {
        let trace = trace_of(dir.path(), scenario, "t.jsonl");
        let trace = flinksim::report::export::load_trace(std::path::Path::new(&trace)).unwrap();
        flinksim::report::viewer::data(&trace)
    };
    let lane = |d: &serde_json::Value, name: &str| {
        d["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .position(|l| l == name)
            .unwrap() as i64
    };
    let d = data("scenarios/batch-reconcile-refused-rpcs.json");
    assert_eq!(
        d["shades"],
        serde_json::json!([
            [
                24_000_000,
                27_000_000,
                lane(&d, "JobMaster"),
                "outage",
                "JobManager down"
            ],
            [
                26_000_000,
                34_000_000,
                lane(&d, "TaskManager2"),
                "outage",
                "TaskManager2 disconnected"
            ],
        ])
    );
    let d = data("scenarios/tolerable-failures-expired-during-delay-spike.json");
    let spikes: Vec<&serde_json::Value> = d["shades"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s[3] == "fault")
        .collect();
    assert_eq!(spikes.len(), 1, "{:?}", d["shades"]);
    assert_eq!(spikes[0][0], 12_000_000);
    assert_eq!(spikes[0][1], 62_000_000);
    assert_eq!(spikes[0][2], -1, "across every lane");
    let d = data("scenarios/batch-remote-shuffle.json");
    assert_eq!(
        d["lanes"].as_array().unwrap().last().unwrap(),
        "ShuffleService"
    );
}

/// `view A --compare B`: both runs, each marked at the first protocol event where they part,
/// by the definition `compare --diff` uses (the protocol events, time and content, agree
/// before it and differ at it): the final transaction under `flink` against `legacy`.
#[test]
fn view_compare_marks_the_first_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let a = trace_of(
        dir.path(),
        "scenarios/final-transaction-flink.json",
        "a.jsonl",
    );
    let b = trace_of(
        dir.path(),
        "scenarios/final-transaction-legacy.json",
        "b.jsonl",
    );
    let html = dir.path().join("c.html").to_str().unwrap().to_owned();
    stdout_of(&["view", &a, "--compare", &b, "-o", &html]);
    let load = |p: &str| flinksim::report::export::load_trace(std::path::Path::new(p)).unwrap();
    let (ta, tb) = (load(&a), load(&b));
    let (ia, ib) = flinksim::report::viewer::divergence(&ta, &tb).expect("the runs part");
    // Before it, the protocol events agree (time and content); at it, they differ.
    let protocol =
        |t: &flinksim::report::export::TraceFile, upto: usize| -> Vec<serde_json::Value> {
            t.events[..upto]
                .iter()
                .filter(|e| {
                    !matches!(e["type"].as_str(), Some("push" | "arrive" | "take"))
                        || e["element"]["kind"] != "record"
                })
                .filter(|e| {
                    !matches!(
                        e["type"].as_str(),
                        Some("blocked" | "commit" | "chained_sink")
                    )
                })
                .map(|e| {
                    let mut e = e.clone();
                    e.as_object_mut().unwrap().remove("index");
                    e
                })
                .collect()
        };
    assert_eq!(protocol(&ta, ia), protocol(&tb, ib));
    let (mut ea, mut eb) = (ta.events[ia].clone(), tb.events[ib].clone());
    ea.as_object_mut().unwrap().remove("index");
    eb.as_object_mut().unwrap().remove("index");
    assert_ne!(ea, eb);
    if !std::path::Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("FLINKSIM_SKIP_BROWSER").is_some(),
            "{CHROMIUM} is missing"
        );
        return;
    }
    let (dom, _) = chromium_dom(&format!("file://{html}#step={ia}"));
    assert!(!dom.contains("data-errors"), "script errors");
    assert_eq!(
        attribute(&dom, "id=\"flinksim-status\"", "data-diverges"),
        ia.to_string()
    );
    assert_eq!(
        attribute(&dom, "id=\"flinksim-status-1\"", "data-diverges"),
        ib.to_string()
    );
    // Drawn lines (their x a number), not the script's template of one.
    let drawn = dom
        .match_indices("class=\"divergence\" x1=\"")
        .filter(|(at, m)| dom[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(drawn, 2, "marked in both runs");
}

/// The `flinksim explain` and `flinksim run` commands among `lines` (a `sh` block, or the
/// `$ ` lines of an output block), each split into its arguments.
fn commands_in<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<Vec<String>> {
    lines
        .filter_map(|l| l.trim().strip_prefix("flinksim "))
        .map(|l| l.split('#').next().unwrap_or(l))
        .filter(|l| l.starts_with("explain ") || l.starts_with("run "))
        .map(|l| {
            l.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<String>>()
        })
        // A runnable command on a shipped file, not a pattern like `flinksim run … | head`.
        .filter(|args| {
            args.get(1).is_some_and(|f| f.ends_with(".json"))
                && args.iter().all(|a| !a.contains(['…', '|', '<', '>']))
        })
        .collect()
}

/// Checks that each excerpt of output in `doc` is what the commands above it print: each line
/// of a plain or `text` code block (`…` marks a cut) must be a line that one of the
/// `flinksim explain` or `flinksim run` commands of the nearest `sh` block or inline-quoted
/// commands before it (or of the block's own `$ flinksim …` lines) prints. Returns how many
/// lines it checked.
fn check_excerpts(doc: &str) -> usize {
    let text = std::fs::read_to_string(root().join(doc)).expect("the document");
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut checked = 0;
    for (i, block) in text.split("```").enumerate() {
        if i % 2 == 0 {
            // Prose: a new section starts afresh, and a command quoted inline (`flinksim run …`)
            // is what the next excerpt shows.
            if block.lines().any(|l| l.starts_with('#')) {
                commands.clear();
            }
            let inline = commands_in(block.split('`').skip(1).step_by(2));
            if !inline.is_empty() {
                commands = inline;
            }
            continue;
        }
        let (lang, body) = block.split_once('\n').unwrap_or((block, ""));
        if lang == "sh" {
            commands = commands_in(body.lines());
            continue;
        }
        if !(lang.is_empty() || lang == "text") {
            continue;
        }
        if body.lines().any(|l| l.starts_with("$ ")) {
            // Its own command (`$ flinksim …`) is what it and the excerpts after it show.
            commands = commands_in(body.lines().filter_map(|l| l.strip_prefix("$ ")));
        }
        if commands.is_empty() {
            continue;
        }
        let printed: Vec<String> = commands
            .iter()
            .flat_map(|args| {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = flinksim(&args);
                String::from_utf8(out.stdout)
                    .expect("utf-8 output")
                    .lines()
                    .map(|l| l.trim().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if line == "…" || line.starts_with("$ ") {
                continue;
            }
            let found = match line.strip_suffix('…') {
                Some(cut) => printed.iter().any(|p| p.starts_with(cut.trim_end())),
                None => printed.iter().any(|p| p == line),
            };
            assert!(
                found,
                "{doc} shows a line none of {commands:?} prints:\n{line}"
            );
            checked += 1;
        }
    }
    checked
}

/// Every excerpt of output in the tour is what the commands above it print, so a change of
/// output fails here until the tour is updated.
#[test]
fn every_tour_excerpt_is_what_its_commands_print() {
    let checked = check_excerpts("docs/tour.md");
    assert!(
        checked >= 30,
        "only {checked} excerpt lines checked: is the scan broken?"
    );
}

/// The same for the README: every excerpt of a `flinksim run` or `flinksim explain` is what
/// that command prints.
#[test]
fn every_readme_excerpt_is_what_its_commands_print() {
    let checked = check_excerpts("README.md");
    assert!(
        checked >= 30,
        "only {checked} excerpt lines checked: is the scan broken?"
    );
}
