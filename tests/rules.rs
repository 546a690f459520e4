//! Every rule the code, the output or the docs cite is explained in the repository: each id
//! (`P1.3`, `F2.4`, `P0` …) names a section of `docs/rules.md`, and each `step N` of a cited
//! section is one of its numbered steps. A user has only the repository, so a citation of a
//! section that does not exist (or no longer does) is a broken promise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The sections of `docs/rules.md` by id, each with the number of its numbered steps.
fn sections() -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(root().join("docs/rules.md")).expect("docs/rules.md");
    let mut sections = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line
            .strip_prefix("### ")
            .or_else(|| line.strip_prefix("## "))
        {
            current = heading
                .split_whitespace()
                .next()
                .filter(|id| rule_id(id).is_some_and(|n| n == id.len()))
                .map(str::to_owned);
            if let Some(id) = &current {
                sections.insert(id.clone(), 0);
            }
        } else if let Some(id) = &current {
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && line[digits..].starts_with(". ") {
                *sections.get_mut(id).expect("inserted") += 1;
            }
        }
    }
    sections
}

/// The length of the rule id at the start of `s` (`P` or `F`, one digit, then optionally a
/// dot and digits), if it starts with one that is not part of a longer word.
fn rule_id(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b.len() < 2 || !matches!(b[0], b'P' | b'F') || !b[1].is_ascii_digit() {
        return None;
    }
    let mut end = 2;
    if b.get(2) == Some(&b'.') && b.get(3).is_some_and(u8::is_ascii_digit) {
        end = 3;
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    let next = b.get(end).copied();
    (!next.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')).then_some(end)
}

/// Every citation in `text`: the id, and the step numbers that follow it (`P2.4 step 4`,
/// `P1.3 steps 1-3`, `F1.5 steps 1 and 2`).
fn citations(text: &str) -> Vec<(String, Vec<usize>)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.char_indices() {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.') {
            continue;
        }
        let Some(len) = rule_id(&text[i..]) else {
            continue;
        };
        let id = text[i..i + len].to_owned();
        let rest = &text[i + len..];
        let mut steps = Vec::new();
        if let Some(tail) = rest
            .strip_prefix(" steps ")
            .or_else(|| rest.strip_prefix(" step "))
        {
            // The numbers of a step list: digits joined by `-`, `–`, `,`, ` and `, `/`.
            let list: String = tail
                .chars()
                .take_while(|c| c.is_ascii_digit() || "-–,/ and".contains(*c))
                .collect();
            steps = list
                .split(|c: char| !c.is_ascii_digit())
                .filter(|n| !n.is_empty())
                .map(|n| n.parse().expect("digits"))
                .collect();
        }
        found.push((id, steps));
    }
    found
}

fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, exts, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
}

#[test]
fn every_cited_rule_is_a_section_of_the_rules() {
    let sections = sections();
    assert!(
        sections.contains_key("P2.4") && sections["P2.4"] == 4,
        "{sections:?}"
    );
    let root = root();
    let mut paths = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for (dir, exts) in [
        ("src", &["rs"][..]),
        ("sim/src", &["rs"]),
        ("tests", &["rs"]),
        ("benches", &["rs", "md"]),
        ("docs", &["md"]),
        ("scenarios", &["json"]),
        ("conformance", &["json", "md"]),
    ] {
        files(&root.join(dir), exts, &mut paths);
    }
    let mut broken = Vec::new();
    let mut cited = 0;
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("readable");
        for (id, steps) in citations(&text) {
            cited += 1;
            let name = path.strip_prefix(&root).expect("inside").display();
            match sections.get(&id) {
                None => broken.push(format!("{name}: {id} is no section of docs/rules.md")),
                Some(&count) => {
                    for step in steps.into_iter().filter(|&s| s == 0 || s > count) {
                        broken.push(format!(
                            "{name}: {id} step {step}, but {id} has {count} numbered steps"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        cited > 1_000,
        "only {cited} citations found: is the scan broken?"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_scanner_reads_ids_and_steps_and_skips_longer_words() {
    let found = citations("P2.4 step 4, (F1.5 steps 1-3), P0. P99 0xF1 FP1.2 F2.3x P1.3's");
    let ids: Vec<(&str, &[usize])> = found
        .iter()
        .map(|(id, s)| (id.as_str(), s.as_slice()))
        .collect();
    assert_eq!(
        ids,
        [
            ("P2.4", &[4][..]),
            ("F1.5", &[1, 3]),
            ("P0", &[]),
            ("P1.3", &[])
        ]
    );
}
