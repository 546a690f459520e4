//! The scale run: source p=1000 → map p=1000 all-to-all (10^6 channels) → sink p=1000, three
//! checkpoints or more, to FINISHED. It runs in a child process (this bench binary again, with
//! `FLINKSIM_BENCH_SCALE` naming the scenario), so its peak memory (`VmHWM`) is its own.
//! `FLINKSIM_BENCH_SCALE_SCENARIO=path` runs another scenario instead (a smaller variant for
//! profiling).
//!
//! Before it, [`sweep`] runs the same job shape at parallelism 30, 100, 300 and 1000 (0.9 k to
//! 10^6 channels) and prints events/s for each: the cost of one event should stay flat as the
//! job grows (issue 18: at p = 1000 at least 0.7× the rate at p = 100).

use super::{cpu_seconds, millions, repo_path, verdict, Table};
use flinksim::trace::Retain;
use flinksim::world::World;
use std::process::Command;
use std::time::Instant as WallClock;

const CHILD: &str = "FLINKSIM_BENCH_SCALE";
/// Set in the child: the parallelism of every vertex (the scenario's own when unset).
const PARALLELISM: &str = "FLINKSIM_BENCH_SCALE_P";
const SWEEP: [u32; 4] = [30, 100, 300, 1000];
const SCENARIO: &str = "scenarios/bench/scale-million-channels.json";

pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// `VmHWM` or `VmRSS` of this process in KiB, from /proc/self/status (Linux).
fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| {
            rest.trim_start_matches(':')
                .trim()
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The child: builds the world once alone (to see what the setup costs), then runs the job and
/// prints one `key=value` line for the parent. A run of less than a second of CPU is repeated
/// until the runs add up to one (runs are deterministic, so each does the same work), so that
/// the 10 ms ticks of CPU time do not blur the small sizes of the sweep.
pub fn child() {
    let path = std::env::var(CHILD).expect("set by the parent");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = match std::env::var(PARALLELISM) {
        Ok(p) => with_parallelism(&text, p.parse().expect("a parallelism")),
        Err(_) => text,
    };
    let scenario = flinksim::scenario::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    let start = WallClock::now();
    let world = World::new(&scenario, scenario.seed, Retain::Nothing);
    let build = start.elapsed().as_secs_f64();
    let world_kib = proc_status_kib("VmRSS");
    let channels = world.graph().channels.len();
    drop(world);
    let start = WallClock::now();
    let cpu_start = cpu_seconds();
    let mut report = super::model::run_quiet(&scenario);
    let wall = start.elapsed().as_secs_f64();
    let mut runs = 1u32;
    while cpu_seconds() - cpu_start < 1.0 {
        report = super::model::run_quiet(&scenario);
        runs += 1;
    }
    let cpu = (cpu_seconds() - cpu_start) / f64::from(runs);
    println!(
        "scale-result channels={channels} build={build} world_kib={world_kib} wall={wall} cpu={cpu} runs={runs} events={} trace={} sim_ns={} status={} violations={} completed={} hwm_kib={}",
        report.events,
        report.trace.len(),
        report.sim_time.as_nanos(),
        report.status,
        report.violations.len(),
        report.completed_checkpoints(),
        proc_status_kib("VmHWM"),
    );
}

/// The scenario with every vertex at parallelism `p` and TaskManagers to host them (the same
/// 30 slots each, one TaskManager per 30 subtasks of a vertex).
fn with_parallelism(text: &str, p: u32) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(text).expect("a JSON scenario");
    for vertex in doc["job"]["vertices"].as_array_mut().expect("job.vertices") {
        vertex["parallelism"] = p.into();
    }
    doc["cluster"]["task_managers"] = p.div_ceil(10).into();
    doc["expect"]
        .as_object_mut()
        .expect("expect")
        .remove("sink_records");
    doc.to_string()
}

/// One run of the child; its `key=value` result line.
fn run_child(scenario: &std::path::Path, parallelism: Option<u32>) -> String {
    let mut command = Command::new(std::env::current_exe().expect("the bench binary"));
    command.env(CHILD, scenario);
    if let Some(p) = parallelism {
        command.env(PARALLELISM, p.to_string());
    }
    let output = command
        .output()
        .expect("the bench binary runs again as the scale child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("scale-result "))
        .unwrap_or_else(|| {
            panic!(
                "the scale child printed no result ({}):\n{stdout}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        });
    line.to_owned()
}

fn field(line: &str, key: &str) -> String {
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_owned()
}

/// Events per second of CPU time of the job shape at each parallelism of [`SWEEP`], one child
/// each.
pub fn sweep(table: &mut Table) {
    let scenario = repo_path(SCENARIO);
    let mut rates = Vec::new();
    for p in SWEEP {
        let line = run_child(&scenario, Some(p));
        let num = |key: &str| -> f64 { field(&line, key).parse().expect("a number") };
        let rate = num("events") / num("cpu");
        rates.push((p, rate));
        let note = match rates.iter().find(|(q, _)| *q == 100) {
            Some((_, at_100)) if p == 1000 => format!(
                "{:.2}× the rate at p = 100 (target ≥ 0.7: {})",
                rate / at_100,
                verdict(rate / at_100 >= 0.7)
            ),
            _ => format!(
                "{} events, {:.3} s of CPU a run ({} runs)",
                field(&line, "events"),
                num("cpu"),
                field(&line, "runs")
            ),
        };
        table.row(
            "scale",
            format!(
                "p = {p} ({} channels, to {}): events per CPU second",
                field(&line, "channels"),
                field(&line, "status")
            ),
            millions(rate),
            note,
        );
    }
}

pub fn rows(table: &mut Table) {
    let scenario: std::path::PathBuf = std::env::var("FLINKSIM_BENCH_SCALE_SCENARIO")
        .map_or_else(|_| repo_path(SCENARIO), Into::into);
    if std::env::var_os("FLINKSIM_BENCH_SCALE_SCENARIO").is_none() {
        sweep(table);
    }
    let line = run_child(&scenario, None);
    let field = |key: &str| -> String { field(&line, key) };
    let num = |key: &str| -> f64 { field(key).parse().expect("a number") };
    let (wall, cpu, hwm_gib) = (num("wall"), num("cpu"), num("hwm_kib") / (1024.0 * 1024.0));
    let name = format!(
        "{} channels, to {} ({} checkpoints completed, {} violations)",
        field("channels"),
        field("status"),
        field("completed"),
        field("violations")
    );
    table.row(
        "scale",
        format!("{name}: CPU time (wall time)"),
        format!("{cpu:.2} s ({wall:.2} s)"),
        format!("target < 5 s: {}", verdict(cpu < 5.0)),
    );
    table.row(
        "scale",
        format!("{name}: peak memory (VmHWM)"),
        format!("{hwm_gib:.2} GiB"),
        format!(
            "target < 1 GB: {}; world alone: {:.0} MiB, built in {:.2} s",
            verdict(num("hwm_kib") * 1024.0 < 1e9),
            num("world_kib") / 1024.0,
            num("build")
        ),
    );
    table.row(
        "scale",
        format!("{name}: events per CPU second"),
        millions(num("events") / cpu),
        format!(
            "{} events, {} trace events, {:.1} ms simulated",
            field("events"),
            field("trace"),
            num("sim_ns") / 1e6
        ),
    );
}
