//! `flinksim compare`: variants over the same seeds, the same for any thread count; the first
//! divergence of two variants; bad `--vary` input rejected with its place.

use std::process::{Command, Output};

const SCENARIO: &str = "scenarios/compare-finish-protocols.json";
const PROTOCOLS: &str = "checkpointing.finish_protocol=option1,option2,flink,legacy";

fn flinksim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("flinksim runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The row of `variant` under the metric whose heading starts with `metric`.
fn row(text: &str, metric: &str, variant: &str) -> Vec<String> {
    let block = text
        .split("\n\n")
        .find(|b| b.starts_with(metric))
        .unwrap_or_else(|| panic!("no {metric:?} in\n{text}"));
    block
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .find(|w| w.first().is_some_and(|w| w == variant))
        .unwrap_or_else(|| panic!("no {variant} under {metric:?}"))
}

#[test]
fn the_finish_protocols_compare_the_same_on_one_and_two_threads() {
    let run = |threads: &str| {
        let out = flinksim(&[
            "compare",
            SCENARIO,
            "--vary",
            PROTOCOLS,
            "--seeds",
            "0..40",
            "--threads",
            threads,
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        stdout(&out)
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert!(
        one.contains("variant 1  option1: 40 runs, 40 FINISHED"),
        "{one}"
    );
    // P1.2: option1 re-triggers descendants of finished tasks, the others never do.
    let retriggers = |p| row(&one, "re-trigger RPCs", p)[2].parse::<u64>().unwrap();
    assert!(retriggers("option1") > 0);
    assert_eq!(
        retriggers("option2") + retriggers("flink") + retriggers("legacy"),
        0
    );
    // Legacy cannot checkpoint once a task finished, and loses the sink's last transaction.
    assert_eq!(row(&one, "checkpoint duration", "legacy")[1], "0");
    assert_eq!(row(&one, "invariant violations", "legacy")[2], "1");
    assert_eq!(row(&one, "invariant violations", "flink")[4], "0");
    // Durations in ms with three decimals, counts as whole numbers.
    assert!(row(&one, "checkpoint duration", "flink")[2].contains('.'));
    assert!(!row(&one, "re-trigger RPCs", "option1")[2].contains('.'));
    // F1.5: under flink the sink's last records wait for the final checkpoint after its end
    // of input; under option2 its input ends only after everything was committed (0); legacy
    // never commits them (a violation, so no figure).
    let latency = |p| row(&one, "final-commit latency", p);
    assert_eq!(latency("flink")[1], "40");
    assert!(latency("flink")[2].parse::<f64>().unwrap() > 1.0);
    assert_eq!(latency("option2")[1..], ["40", "0.000", "0.000", "0.000"]);
    assert_eq!(latency("legacy")[1], "0");
}

#[test]
fn two_fields_vary_as_their_product_and_the_chart_is_written() {
    let dir = std::env::temp_dir().join(format!("flinksim-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("chart.html");
    let out = flinksim(&[
        "compare",
        SCENARIO,
        "--vary",
        "checkpointing.finish_protocol=option1,flink",
        "--vary",
        "network.channel_capacity=2,16",
        "--seeds",
        "0..5",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("4 variants of checkpointing.finish_protocol × network.channel_capacity"));
    assert!(text.contains(
        "variant 2  checkpointing.finish_protocol=option1 network.channel_capacity=16: 5 runs"
    ));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>") && page.matches("<svg").count() == 9);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn diff_shows_where_two_variants_part() {
    let out = flinksim(&["compare", SCENARIO, "--vary", PROTOCOLS, "--diff", "3"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.starts_with("seed 3: the protocol traces part at protocol event "),
        "{text}"
    );
    assert!(
        text.contains("\noption1:\n") && text.contains("\noption2:\n"),
        "{text}"
    );
    // The first event that differs, even at the same instant as the other side's.
    let cascade = flinksim(&[
        "compare",
        "scenarios/cascade-option1.json",
        "--vary",
        "checkpointing.finish_protocol=flink,legacy",
        "--diff",
        "0",
    ]);
    let text = stdout(&cascade);
    assert!(
        text.starts_with("seed 0: the protocol traces part at protocol event 46 (of 178 and 117)"),
        "{text}"
    );
    let first = |side: &str| {
        text.split(&format!("\n{side}:\n"))
            .nth(1)
            .and_then(|t| t.lines().next())
            .map(str::trim)
    };
    // F1.5 against legacy: at the same instant src[0] sends EndOfData, or EndOfPartition.
    assert_eq!(
        first("flink"),
        Some("5.1ms  src[0]             sent EndOfData on src[0]->m1[0]"),
        "{text}"
    );
    assert_eq!(
        first("legacy"),
        Some("5.1ms  src[0]             sent EndOfPartition on src[0]->m1[0]"),
        "{text}"
    );
    let same = flinksim(&[
        "compare",
        SCENARIO,
        "--vary",
        "checkpointing.finish_protocol=flink,flink",
        "--diff",
        "3",
    ]);
    assert!(stdout(&same).contains("the two variants' protocol traces are the same"));
}

#[test]
fn bad_variants_are_refused_with_their_place() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--vary", "job.vertices[9].parallelism=2"],
            "job.vertices[9].parallelism: vertices[9]: no such element (7 there)",
        ),
        (
            &["--vary", "checkpointing.finish_protocol=option9"],
            "(option9)",
        ),
        (&["--vary", "nofield"], "write FIELD=V1,V2"),
        (&["--vary", "seed=1", "--html", SCENARIO], "--html"),
    ];
    for (args, wanted) in cases {
        let mut all = vec!["compare", SCENARIO];
        all.extend_from_slice(args);
        let out = flinksim(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(wanted), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}
