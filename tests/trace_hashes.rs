//! The trace hash of every shipped scenario and conformance twin, pinned in
//! `tests/golden/scenario-hashes.txt`: a change to the model that alters any run shows here,
//! scenario by scenario. Such a change must be a fix (or a feature) named in its commit, with
//! the ledger rewritten by `UPDATE_GOLDEN=1 cargo test --test trace_hashes`; a refactoring (the
//! one-world change, say) must leave it as it is. Not part of the cargo-mutants test command:
//! it catches every change, not bugs.

use flinksim::run::{run, RunOptions};
use flinksim::scenario;
use flinksim::trace::Retain;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `name 0xHASH` per scenario, sorted by directory and name.
fn ledger() -> String {
    let mut files = Vec::new();
    for dir in ["scenarios", "conformance/scenarios"] {
        let dir = root().join(dir);
        files.extend(
            std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.expect("readable entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "json")),
        );
    }
    files.sort();
    let mut out = String::new();
    for file in files {
        let scenario = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let report = run(
            &scenario,
            &RunOptions {
                seed: None,
                retain: Retain::Nothing,
                eager_sources: false,
            },
        );
        let name = file.strip_prefix(root()).expect("under the root").display();
        out.push_str(&format!("{name} {:#018x}\n", report.trace_hash));
    }
    out
}

#[test]
fn every_scenario_keeps_its_pinned_trace_hash() {
    let path = root().join("tests/golden/scenario-hashes.txt");
    let actual = ledger();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).expect("write the ledger");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    let changed: Vec<String> = expected
        .lines()
        .filter(|line| !actual.lines().any(|a| a == *line))
        .map(|line| {
            let name = line.split(' ').next().unwrap_or(line);
            let now = actual
                .lines()
                .find(|a| a.split(' ').next() == Some(name))
                .map_or("gone", |a| a.rsplit(' ').next().unwrap_or(a));
            format!("{line} -> {now}")
        })
        .chain(
            actual
                .lines()
                .filter(|a| {
                    !expected
                        .lines()
                        .any(|e| e.split(' ').next() == a.split(' ').next())
                })
                .map(|a| format!("{a} (new)")),
        )
        .collect();
    assert!(
        changed.is_empty(),
        "trace hashes changed (if on purpose, name the fix in the commit and rerun with \
         UPDATE_GOLDEN=1):\n{}",
        changed.join("\n")
    );
}

/// The shipped scenarios keep fewer than `sim::queue::RADIX_ABOVE` events pending, so their
/// runs never leave the binary heap. The 100-subtask bench job holds more (its queue turns into
/// a radix heap and back about thirty times): its trace hash, pinned from before the radix heap
/// existed, shows that the representation never changes the order of events.
#[test]
fn a_run_whose_queue_turns_radix_keeps_its_hash() {
    let scenario = scenario::load(&root().join("scenarios/bench/streaming-100.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let report = run(
        &scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        },
    );
    assert_eq!(report.trace_hash, 0xf710_a871_404b_49b6);
}
