//! Campaigns on a cluster (issue 17, part 4): the recipes of `deploy/` run here as they would
//! on their cluster (the Slurm script with the array variables Slurm sets, the Kubernetes pod
//! script with `JOB_COMPLETION_INDEX`, the local script with xargs), and `flinksim merge` of
//! their shards must equal one unsharded run byte for byte. Then every way a set of shards can
//! be wrong: refused with exit 2 and nothing written, or merged and reported incomplete (4).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_flinksim")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn flinksim(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("flinksim runs")
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// `flinksim fuzz` over `seeds` into `out`, with more options; its exit code must be 0 or 1.
fn fuzz(seeds: &str, out: &Path, more: &[&str]) {
    let mut args = vec![
        "fuzz",
        "--seeds",
        seeds,
        "--threads",
        "1",
        "--out",
        path(out),
    ];
    args.extend_from_slice(more);
    let output = flinksim(&args);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The unsharded run of `seeds`: its results.jsonl and what it printed.
fn unsharded(dir: &Path, seeds: &str) -> (String, String) {
    let out = dir.join("unsharded");
    let output = flinksim(&[
        "fuzz",
        "--seeds",
        seeds,
        "--threads",
        "2",
        "--out",
        path(&out),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    (read(&out.join("results.jsonl")), text(&output))
}

fn merge(inputs: &[&Path], out: &Path) -> Output {
    let mut args = vec!["merge"];
    args.extend(inputs.iter().map(|p| path(p)));
    args.extend(["--out", path(out)]);
    flinksim(&args)
}

/// The summary lines `merge` shares with `fuzz`: outcomes, invariants, coverage.
fn summary(printed: &str) -> Vec<&str> {
    printed
        .lines()
        .skip_while(|l| !l.starts_with("outcomes:"))
        .take_while(|l| !l.starts_with("throughput:") && !l.starts_with("results:"))
        .collect()
}

/// Checks a merged directory against the unsharded run: the same file, line for line (the
/// header too: the merge's has no shard, like the unsharded run's).
fn assert_same_as_unsharded(merged: &Path, merge_printed: &str, unsharded: &(String, String)) {
    let merged_text = read(&merged.join("results.jsonl"));
    assert_eq!(merged_text.lines().count(), unsharded.0.lines().count());
    for (i, (a, b)) in merged_text.lines().zip(unsharded.0.lines()).enumerate() {
        assert_eq!(a, b, "line {}", i + 1);
    }
    assert_eq!(merged_text, unsharded.0, "byte for byte");
    assert_eq!(summary(merge_printed), summary(&unsharded.1));
}

/// The header of a shard differs from the unsharded run's by its shard only.
fn assert_shard_header(dir: &Path, k: u64, n: u64, unsharded: &str) {
    let mut header: serde_json::Value =
        serde_json::from_str(read(&dir.join("results.jsonl")).lines().next().unwrap()).unwrap();
    assert_eq!(header["shard"], serde_json::json!({"k": k, "n": n}));
    header["shard"] = serde_json::Value::Null;
    assert_eq!(header.to_string(), unsharded.lines().next().unwrap());
}

#[test]
fn the_local_recipe_merges_to_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let full = unsharded(dir.path(), "0..60");
    let out = dir.path().join("local");
    let output = Command::new(root().join("deploy/local/fuzz-shards.sh"))
        .args(["0..60", "3", path(&out), "--threads", "1"])
        .env("FLINKSIM", bin())
        .env("JOBS", "2")
        // The machines that run the tests need not have GNU parallel; xargs is POSIX.
        .env("FUZZ_SHARDS_RUNNER", "xargs")
        .output()
        .expect("the script runs");
    let printed = text(&output);
    assert_eq!(output.status.code(), Some(0), "{printed}");
    assert!(
        printed.starts_with("flinksim 0.1.0 merge: 3 of 3 shards, seeds 0..60, 60 of 60 seeds"),
        "{printed}"
    );
    for k in 0..3 {
        assert_shard_header(&out.join(format!("shard-{k}")), k, 3, &full.0);
    }
    assert_same_as_unsharded(&out.join("merged"), &printed, &full);
}

#[test]
fn the_slurm_array_and_the_kubernetes_indexed_job_merge_to_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let full = unsharded(dir.path(), "0..60");

    // Slurm: each array task, with the variables Slurm sets for `--array=0-2`.
    let slurm = dir.path().join("slurm");
    for k in 0..3 {
        let output = Command::new("bash")
            .arg(root().join("deploy/slurm/fuzz.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_CPUS_PER_TASK", "1")
            .env("CAMPAIGN_SEEDS", "0..60")
            .env("CAMPAIGN_OUT", &slurm)
            .env("FLINKSIM", bin())
            .output()
            .expect("bash runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    }
    let shards: Vec<PathBuf> = (0..3).map(|k| slurm.join(format!("shard-{k}"))).collect();
    let inputs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let output = merge(&inputs, &slurm.join("merged"));
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_same_as_unsharded(&slurm.join("merged"), &text(&output), &full);

    // Kubernetes: the pod's script, as the manifest gives it to `sh -c`, once per index, with
    // the manifest's own environment but for the seed range, the shard count and the volume.
    let manifest = read(&root().join("deploy/k8s/fuzz-job.yaml"));
    let script = pod_script(&manifest);
    let completions = yaml_value(&manifest, "completions:");
    let shards_env = manifest
        .lines()
        .skip_while(|l| !l.contains("name: SHARDS"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("value: "))
        .map(|v| v.trim_matches('"').to_owned());
    assert_eq!(
        Some(completions.clone()),
        shards_env,
        "SHARDS must equal completions"
    );
    assert_eq!(yaml_value(&manifest, "completionMode:"), "Indexed");
    let k8s = dir.path().join("k8s");
    let bin_dir = Path::new(bin()).parent().unwrap();
    let search_path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for k in 0..3 {
        let output = Command::new("sh")
            .args(["-c", &script])
            .env("JOB_COMPLETION_INDEX", k.to_string())
            .env("SHARDS", "3")
            .env("SEEDS", "0..60")
            .env("THREADS", "1")
            .env("OUT_DIR", &k8s)
            .env("FUZZ_OPTIONS", "")
            .env("PATH", &search_path)
            .output()
            .expect("sh runs");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    }
    let shards: Vec<PathBuf> = (0..3).map(|k| k8s.join(format!("shard-{k}"))).collect();
    let inputs: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let output = merge(&inputs, &k8s.join("merged"));
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_same_as_unsharded(&k8s.join("merged"), &text(&output), &full);
}

/// The container's script: the block scalar (`- |`) under `args:`, dedented.
fn pod_script(manifest: &str) -> String {
    let mut lines = manifest.lines().skip_while(|l| l.trim() != "- |");
    lines.next().expect("a `- |` block under args");
    let body: Vec<&str> = lines
        .take_while(|l| l.trim().is_empty() || l.starts_with("              "))
        .collect();
    body.iter()
        .map(|l| l.get(14..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn yaml_value(manifest: &str, key: &str) -> String {
    manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in the manifest"))
        .trim()
        .to_owned()
}

/// The `n` shards of seeds 0..12 (`--threads 1`), with more options for the one `odd_one` names.
fn shards(dir: &Path, n: u64, odd_one: Option<(u64, &[&str])>) -> Vec<PathBuf> {
    (0..n)
        .map(|k| {
            let out = dir.join(format!("shard-{k}-of-{n}"));
            let shard = format!("{k}/{n}");
            let mut more = vec!["--shard", shard.as_str()];
            if let Some((_, extra)) = odd_one.filter(|(odd, _)| *odd == k) {
                more.extend_from_slice(extra);
            }
            fuzz("0..12", &out, &more);
            out
        })
        .collect()
}

/// A refused merge: exit 2, one error line naming `names` (a file, what differs), and no
/// output file.
fn assert_refused(inputs: &[&Path], out: &Path, names: &[&str]) {
    let output = merge(inputs, out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    for name in names {
        assert!(stderr.contains(name), "{name:?} not in {stderr}");
    }
    assert!(output.stdout.is_empty(), "{}", text(&output));
    assert!(!out.join("results.jsonl").exists(), "no partial output");
}

#[test]
fn shards_of_different_campaigns_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = shards(
        &dir.path().join("mixed"),
        2,
        Some((1, &["--mode", "streaming"])),
    );
    let out = dir.path().join("out");
    assert_refused(
        &[&mixed[0], &mixed[1]],
        &out,
        &[path(&mixed[1]), "mode", "\"streaming\"", "\"any\""],
    );

    let recheck = shards(
        &dir.path().join("recheck"),
        2,
        Some((0, &["--recheck", "0.5"])),
    );
    assert_refused(&[&recheck[0], &recheck[1]], &out, &["recheck"]);

    // Another build: the version in the header differs.
    let other = dir.path().join("other-build");
    std::fs::create_dir_all(&other).unwrap();
    let results = read(&mixed[0].join("results.jsonl")).replacen(
        "\"flinksim\":\"0.1.0\"",
        "\"flinksim\":\"0.0.9\"",
        1,
    );
    std::fs::write(other.join("results.jsonl"), results).unwrap();
    let threes = shards(&dir.path().join("three"), 3, None);
    assert_refused(
        &[&threes[0], &other],
        &out,
        &[path(&other), "flinksim 0.0.9", "0.1.0"],
    );

    // Different N: shard 1/2 with shards of three.
    assert_refused(
        &[&threes[0], &mixed[0], &threes[2]],
        &out,
        &[path(&mixed[0]), "shard 0/2", "shard 0/3"],
    );
    // An unsharded run is a shard of one: it merges alone, not with shards.
    let whole = dir.path().join("whole");
    fuzz("0..12", &whole, &[]);
    assert_refused(&[&whole, &threes[1]], &out, &["unsharded", "shard 1/3"]);
    let alone = merge(&[&whole], &out);
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone));
    assert_eq!(
        read(&out.join("results.jsonl")),
        read(&whole.join("results.jsonl"))
    );
}

#[test]
fn the_same_shard_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let threes = shards(dir.path(), 3, None);
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(threes[1].join("results.jsonl"), copy.join("results.jsonl")).unwrap();
    let out = dir.path().join("out");
    assert_refused(
        &[&threes[0], &threes[1], &threes[2], &copy],
        &out,
        &[path(&copy), "shard 1/3 again", path(&threes[1])],
    );
    // Merging into a shard's own directory would replace its results.
    let before = read(&threes[1].join("results.jsonl"));
    let output = merge(&[&threes[0], &threes[1]], &threes[1]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("--out"), "{}", text(&output));
    assert_eq!(read(&threes[1].join("results.jsonl")), before);
}

#[test]
fn missing_and_duplicate_seeds_make_an_incomplete_merge() {
    let dir = tempfile::tempdir().unwrap();
    let threes = shards(dir.path(), 3, None);
    let out = dir.path().join("out");

    // A shard that never ran: its seeds are missing; the rest is merged, exit 4.
    let output = merge(&[&threes[0], &threes[2]], &out);
    let printed = text(&output);
    assert_eq!(output.status.code(), Some(4), "{printed}");
    assert!(
        printed.contains("missing: shard 1/3 absent: 4 seeds (1, 4, 7, 10)"),
        "{printed}"
    );
    assert!(
        printed.contains("incomplete: 4 of 12 seeds missing"),
        "{printed}"
    );
    let merged = read(&out.join("results.jsonl"));
    assert_eq!(merged.lines().count(), 1 + 8);
    assert!(merged.lines().next().unwrap().contains("\"shard\":null"));

    // A shard cut short (as --time-limit does): its last seeds are missing.
    let short = dir.path().join("short");
    std::fs::create_dir_all(&short).unwrap();
    let full = read(&threes[1].join("results.jsonl"));
    let cut: Vec<&str> = full.lines().take(3).collect(); // the header and seeds 1, 4
    std::fs::write(short.join("results.jsonl"), cut.join("\n") + "\n").unwrap();
    let output = merge(&[&threes[0], &short, &threes[2]], &out);
    let printed = text(&output);
    assert_eq!(output.status.code(), Some(4), "{printed}");
    assert!(
        printed.contains("missing: shard 1/3 cut short (--time-limit?): 2 of 4 seeds (7, 10)"),
        "{printed}"
    );

    // A seed line given twice (a shard's file with a line repeated): reported, kept once.
    let twice = dir.path().join("twice");
    std::fs::create_dir_all(&twice).unwrap();
    let line = full.lines().nth(2).unwrap();
    std::fs::write(twice.join("results.jsonl"), format!("{full}{line}\n")).unwrap();
    let output = merge(&[&threes[0], &twice, &threes[2]], &out);
    let printed = text(&output);
    assert_eq!(output.status.code(), Some(4), "{printed}");
    assert!(printed.contains("duplicate: seed 4 at"), "{printed}");
    assert!(
        printed.contains("incomplete: 0 of 12 seeds missing, 1 given more than once"),
        "{printed}"
    );
    assert_eq!(read(&out.join("results.jsonl")).lines().count(), 13);

    // The same seed with another result: no merge can choose, refused.
    let differ = dir.path().join("differ");
    std::fs::create_dir_all(&differ).unwrap();
    let changed = line.replacen("\"rechecked\":false", "\"rechecked\":true", 1);
    std::fs::write(differ.join("results.jsonl"), format!("{full}{changed}\n")).unwrap();
    let refused = dir.path().join("refused");
    assert_refused(
        &[&threes[0], &differ, &threes[2]],
        &refused,
        &["seed 4 again, with another result"],
    );
    // A seed that is not the shard's.
    let stray = dir.path().join("stray");
    std::fs::create_dir_all(&stray).unwrap();
    let foreign = read(&threes[0].join("results.jsonl"));
    let foreign_line = foreign.lines().nth(1).unwrap();
    std::fs::write(
        stray.join("results.jsonl"),
        format!("{full}{foreign_line}\n"),
    )
    .unwrap();
    assert_refused(&[&stray], &refused, &["seed 0 is not among the seeds"]);
    // A file without a header (written before headers existed).
    let old = dir.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    std::fs::write(old.join("results.jsonl"), full.lines().nth(1).unwrap()).unwrap();
    assert_refused(
        &[&old],
        &refused,
        &[":1: the first line is not a campaign header"],
    );
}

#[test]
fn the_shards_reproducers_are_copied() {
    let dir = tempfile::tempdir().unwrap();
    let bug = ["--bug", "finish-before-final-checkpoint", "--shrink", "1"];
    let twos: Vec<PathBuf> = (0..2)
        .map(|k| {
            let out = dir.path().join(format!("shard-{k}"));
            let shard = format!("{k}/2");
            let mut more = vec!["--shard", shard.as_str()];
            more.extend_from_slice(&bug);
            fuzz("0..6", &out, &more);
            out
        })
        .collect();
    let out = dir.path().join("out");
    let output = merge(&[&twos[0], &twos[1]], &out);
    let printed = text(&output);
    assert_eq!(output.status.code(), Some(1), "{printed}");
    let mut expected = Vec::new();
    for shard in &twos {
        for entry in std::fs::read_dir(shard).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.starts_with("seed-") {
                expected.push(name);
            }
        }
    }
    assert!(
        expected.iter().any(|n| n.ends_with(".json")),
        "{expected:?}"
    );
    for name in &expected {
        assert!(out.join(name).exists(), "{name} not copied");
        if name.ends_with(".json") {
            assert!(
                printed.contains(&format!(
                    "reproduce: flinksim run {}",
                    out.join(name).display()
                )),
                "{printed}"
            );
        }
    }
    // The reproduce lines of the violation table carry the campaign's options.
    assert!(printed.contains("exactly-once-output"), "{printed}");
}
