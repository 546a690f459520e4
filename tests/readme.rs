//! The README's example output is checked, so it cannot go stale: the main example's block
//! must be, line for line and in order, part of what `flinksim run` prints today (`…` marks
//! the lines left out), and every trace hash the README quotes for the main example must be
//! the one the run prints.

use std::process::Command;

const MAIN: &str = "scenarios/final-transaction-flink.json";

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README")
}

fn run_main() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", MAIN])
        .output()
        .expect("flinksim runs");
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The text block that follows `heading` in the README.
fn block_after(text: &str, heading: &str) -> Vec<String> {
    let start = text.find(heading).expect("the heading") + heading.len();
    let open = start + text[start..].find("```text\n").expect("a text block") + 8;
    let close = open + text[open..].find("```").expect("the block ends");
    text[open..close].lines().map(str::to_owned).collect()
}

#[test]
fn the_main_example_block_is_what_the_run_prints() {
    let printed = run_main();
    let mut lines = printed.lines();
    for wanted in block_after(&readme(), "## What a run prints") {
        if wanted.trim() == "…" || wanted.ends_with('…') {
            // An elision, or a line the README shortens: match its beginning.
            let prefix = wanted.trim_end_matches('…');
            if !prefix.trim().is_empty() {
                assert!(
                    lines.any(|l| l.starts_with(prefix)),
                    "README line not printed (or out of order): {wanted:?}\n{printed}"
                );
            }
            continue;
        }
        assert!(
            lines.any(|l| l == wanted),
            "README line not printed (or out of order): {wanted:?}\n{printed}"
        );
    }
}

#[test]
fn every_hash_quoted_for_the_main_example_is_current() {
    let printed = run_main();
    let hash = printed
        .lines()
        .find_map(|l| l.strip_prefix("trace hash   "))
        .expect("a trace hash line");
    let events = printed
        .lines()
        .find_map(|l| l.strip_prefix("events       "))
        .and_then(|l| {
            l.split_once('(')
                .map(|(_, t)| t.split(' ').next().unwrap_or_default())
        })
        .expect("an events line");
    let text = readme();
    for quoted in [
        format!("identical: {events} events, trace hash {hash}"),
        format!("deterministic: 3 processes, trace hash {hash}"),
    ] {
        assert!(text.contains(&quoted), "README lacks {quoted:?}");
    }
    for (at, _) in text.match_indices("trace hash 0x") {
        let quoted = &text[at + 11..at + 29];
        assert_eq!(quoted, hash, "a stale hash in the README near byte {at}");
    }
}

/// The rows of the README's "Trace format" tables: the first cell of every row, unquoted.
fn documented_trace_types() -> std::collections::BTreeSet<String> {
    let readme = readme();
    let start = readme.find("\n## Trace format").expect("the section");
    let end = start + 1 + readme[start + 1..].find("\n## ").expect("a next section");
    readme[start..end]
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// Every event type a shipped scenario records has a row in the README's "Trace format", so a
/// new event (of either kind of job) cannot ship undocumented.
#[test]
fn every_recorded_event_type_is_documented() {
    use flinksim::run::{run, RunOptions};
    use flinksim::trace::Retain;
    let documented = documented_trace_types();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut recorded = std::collections::BTreeSet::new();
    for file in &files {
        let scenario = flinksim::scenario::load(file).unwrap_or_else(|e| panic!("{e}"));
        let options = RunOptions {
            seed: None,
            retain: Retain::Everything,
            eager_sources: false,
        };
        for (_, _, event) in run(&scenario, &options).trace.kept() {
            recorded.insert(event.kind());
        }
    }
    let missing: Vec<_> = recorded
        .iter()
        .filter(|k| !documented.contains(**k))
        .collect();
    assert!(
        missing.is_empty(),
        "not in README \"Trace format\": {missing:?}"
    );
    assert!(recorded.contains("vertex_initialized") && recorded.contains("snapshot"));
}
