//! Every console example in `README.md` and `docs/tour.md` is run, so a change of output fails
//! here until the docs follow (issue 16, item 6).
//!
//! An *example* is a `text` (or unlabelled) block of output and the commands it shows:
//! - a block whose first line is `$ flinksim …` (or `$ cargo run --release -- …`) shows that
//!   command's output below it;
//! - any other output block shows the output of the `flinksim` commands of the nearest `sh`
//!   block before it in the same section (a heading ends a section).
//!
//! Each command runs in a scratch directory where `scenarios/` and `conformance/` lead to the
//! repository's, so the files the docs write (`run.jsonl`, `/tmp/…`) land outside it. The
//! block's lines must be lines of the commands' output (stdout, then stderr), in order, leading
//! and trailing blanks aside (the docs may indent less than the columns of a run); `…` alone
//! skips any number of lines, and a line ending in `…` matches any output line it begins. Wall-clock figures (a throughput) are written with `…` in the docs for that reason.
//!
//! Blocks that are not output (a file format, a usage synopsis with `<PLACEHOLDERS>`) have no
//! runnable command and are skipped; the one example too slow for a debug build is listed in
//! [`NOT_RUN`] with why.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Examples not run here, by their command, and why.
const NOT_RUN: &[(&str, &str)] = &[(
    "flinksim mutants",
    "one campaign per injected bug (66): about 40 s in a release build, many minutes in the debug build tests use; README says which version its table is from",
)];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Block {
    line: usize,
    lang: String,
    body: Vec<String>,
}

/// The fenced blocks of a Markdown file and, for each, whether a heading came since the block
/// before it.
fn blocks(text: &str) -> Vec<(Block, bool)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    let mut heading = false;
    while let Some((i, line)) = lines.next() {
        if line.starts_with('#') {
            heading = true;
            continue;
        }
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let body = lines
            .by_ref()
            .map(|(_, l)| l)
            .take_while(|l| !l.starts_with("```"))
            .map(str::to_owned)
            .collect();
        let block = Block {
            line: i + 1,
            lang: lang.trim().to_owned(),
            body,
        };
        out.push((block, std::mem::take(&mut heading)));
    }
    out
}

/// The `flinksim` arguments of a command line, or `None` for any other command. Comments
/// (`# …`) are dropped; placeholders (`<TRACE>`) mean a synopsis, not a command.
fn flinksim_args(line: &str) -> Option<Vec<String>> {
    let line = line.trim().trim_start_matches("$ ");
    let line = line.split(" #").next().unwrap_or(line);
    let rest = line
        .strip_prefix("flinksim ")
        .or_else(|| line.strip_prefix("cargo run --release -- "))?;
    if rest.contains('<') {
        return None;
    }
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// A scratch directory with the repository's inputs reachable by their usual relative paths.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flinksim-doc-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    for name in ["scenarios", "conformance"] {
        let link = dir.join(name);
        if !link.exists() {
            std::os::unix::fs::symlink(root().join(name), &link).expect("symlink");
        }
    }
    dir
}

fn run(dir: &Path, args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flinksim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("flinksim runs");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Why `expected` is not an in-order excerpt of `printed`, if it is not.
fn mismatch(expected: &[String], printed: &str) -> Option<String> {
    let mut lines = printed.lines();
    for wanted in expected {
        let wanted = wanted.trim();
        if wanted == "…" {
            continue;
        }
        let found = match wanted.strip_suffix('…') {
            Some(prefix) => lines.any(|l| l.trim().starts_with(prefix)),
            None => lines.any(|l| l.trim() == wanted),
        };
        if !found {
            return Some(format!("not printed (or out of order): {wanted:?}"));
        }
    }
    None
}

fn check_file(relative: &str, dir: &Path, failures: &mut Vec<String>, checked: &mut usize) {
    let text = std::fs::read_to_string(root().join(relative)).expect("the doc");
    let mut commands: Option<Vec<Vec<String>>> = None;
    for (block, heading) in blocks(&text) {
        if heading {
            commands = None;
        }
        if block.lang == "sh" {
            let found: Vec<_> = block.body.iter().filter_map(|l| flinksim_args(l)).collect();
            commands = (!found.is_empty()).then_some(found);
            continue;
        }
        if !(block.lang.is_empty() || block.lang == "text") {
            continue;
        }
        let (cmds, expected) = match block.body.first().and_then(|l| l.strip_prefix("$ ")) {
            Some(first) => match flinksim_args(first) {
                Some(args) => (vec![args], &block.body[1..]),
                None => continue,
            },
            None => match &commands {
                Some(cmds) => (cmds.clone(), &block.body[..]),
                None => continue,
            },
        };
        let shown = format!("flinksim {}", cmds[0].join(" "));
        if NOT_RUN.iter().any(|(prefix, _)| shown.starts_with(prefix)) {
            continue;
        }
        let printed: String = cmds.iter().map(|args| run(dir, args)).collect();
        if let Some(why) = mismatch(expected, &printed) {
            failures.push(format!(
                "{relative}:{} ({shown}{}): {why}\n--- printed ---\n{printed}",
                block.line,
                if cmds.len() > 1 { " …" } else { "" }
            ));
        }
        *checked += 1;
    }
}

#[test]
fn every_console_example_prints_what_the_docs_show() {
    let dir = scratch();
    let (mut failures, mut checked) = (Vec::new(), 0);
    for doc in ["README.md", "docs/tour.md"] {
        check_file(doc, &dir, &mut failures, &mut checked);
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        checked >= 25,
        "only {checked} examples found: is the parser right?"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} examples differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn an_excerpt_must_be_printed_in_order() {
    let printed = "a\nb 1\nc\n";
    let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(mismatch(&lines(&["a", "…", "c"]), printed), None);
    assert_eq!(mismatch(&lines(&["b …", "c"]), printed), None);
    assert!(mismatch(&lines(&["c", "a"]), printed).is_some());
    assert!(mismatch(&lines(&["b 2"]), printed).is_some());
}
