//! The batch part of a run's summary (P2.4 figures) and of its expectations, and the
//! side-by-side comparison with a full restart (`--compare-baseline`).

use crate::batch::{BatchFigures, RecoveryRecord};
use crate::graph::ExecutionGraph;
use crate::run::RunReport;
use crate::scenario::Expect;
use crate::trace::RerunReason;
use serde_json::{json, Value};

fn rerun_names(graph: &ExecutionGraph, r: &RecoveryRecord) -> Vec<String> {
    let mut names: Vec<String> = r
        .rerun
        .iter()
        .map(|(s, _)| graph.subtask_name(*s).to_string())
        .collect();
    names.sort();
    names
}

fn reasons(r: &RecoveryRecord) -> Vec<(RerunReason, usize)> {
    RerunReason::ALL
        .into_iter()
        .map(|why| (why, r.rerun.iter().filter(|(_, w)| *w == why).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The `batch` block of the summary JSON.
pub fn batch_json(graph: &ExecutionGraph, figures: &BatchFigures) -> Value {
    json!({
        "parallelism": figures.parallelism.iter().map(|(v, p)| (v.clone(), json!(p))).collect::<serde_json::Map<_, _>>(),
        "failovers": figures.failovers,
        "finished_at": figures.finished_at.map(|t| t.to_string()),
        "work_redone": figures.redone().to_string(),
        "speculative_attempts": figures.speculative.iter().map(|(s, won)| json!({"task": s, "won": won})).collect::<Vec<_>>(),
        "recoveries": figures.recoveries.iter().map(|r| json!({
            "crashed_at": r.crashed_at.to_string(),
            "elected_at": r.elected_at.to_string(),
            "running_at": r.running_at.map(|t| t.to_string()),
            "recovery_time": r.running_at.map(|t| t.saturating_duration_since(r.crashed_at).to_string()),
            "full_restart": r.full_restart,
            "events_lost": r.events_lost,
            "discarded": r.discarded,
            "recovered": r.recovered.len(),
            "rerun": rerun_names(graph, r),
            "rerun_reasons": reasons(r).into_iter().map(|(w, n)| (w.name().to_owned(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "work_redone": r.redone.to_string(),
            "late_reports": r.late_reports,
            "timed_out": r.timed_out,
            "interrupted": r.interrupted,
        })).collect::<Vec<_>>(),
    })
}

/// The batch lines of the text summary.
pub fn batch_text(figures: &BatchFigures) -> String {
    let mut s = String::new();
    let decided: Vec<String> = figures
        .parallelism
        .iter()
        .map(|(v, p)| format!("{v}={}", p.map_or("-".to_owned(), |p| p.to_string())))
        .collect();
    s.push_str(&format!("parallelism  {}\n", decided.join(", ")));
    if !figures.speculative.is_empty() {
        let all: Vec<&str> = figures
            .speculative
            .iter()
            .map(|(t, _)| t.as_str())
            .collect();
        let won: Vec<&str> = figures
            .speculative
            .iter()
            .filter(|(_, w)| *w)
            .map(|(t, _)| t.as_str())
            .collect();
        s.push_str(&format!(
            "speculation  {} speculative attempt(s): {}; {} finished first{}\n",
            all.len(),
            all.join(", "),
            won.len(),
            if won.is_empty() {
                String::new()
            } else {
                format!(": {}", won.join(", "))
            }
        ));
    }
    for r in &figures.recoveries {
        let how = if r.full_restart {
            "full restart (no recovery)".to_owned()
        } else {
            format!(
                "{} recovered as finished, {} finished events discarded{}",
                r.recovered.len(),
                r.discarded,
                if r.timed_out {
                    ", waited until previous_worker_timeout"
                } else {
                    ""
                }
            )
        };
        let why: Vec<String> = reasons(r)
            .into_iter()
            .map(|(w, n)| format!("{n} {}", w.name()))
            .collect();
        s.push_str(&format!(
            "recovery     crash at {}, RUNNING {}: {how}; {} interrupted, {} re-run{}; work redone {}{}\n",
            r.crashed_at,
            r.running_at.map_or("never".to_owned(), |t| format!(
                "after {}",
                t.saturating_duration_since(r.crashed_at)
            )),
            r.interrupted,
            r.rerun.len(),
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join(", "))
            },
            r.redone,
            if r.late_reports > 0 {
                format!("; {} late partition reports released", r.late_reports)
            } else {
                String::new()
            }
        ));
    }
    if figures.failovers > 0 {
        s.push_str(&format!("failovers    {}\n", figures.failovers));
    }
    s
}

/// The comparison of a recovery (or reconciliation) run with the same run under a full
/// restart.
pub fn baseline_text(run: &RunReport, baseline: &RunReport) -> String {
    struct Column {
        kept_finished: usize,
        kept_running: u32,
        interrupted: u32,
        rerun: usize,
        redone: String,
        running_at: String,
        finished_at: String,
    }
    let column = |r: &RunReport| {
        let f = r.batch.as_ref().expect("a batch run");
        let reconciled_finished: u32 = r.reconciliations.iter().map(|x| x.kept_finished).sum();
        let running_at = f
            .recoveries
            .iter()
            .filter_map(|x| x.running_at)
            .chain(r.reconciliations.iter().filter_map(|x| x.ended))
            .max()
            .map_or("-".to_owned(), |t| t.to_string());
        Column {
            kept_finished: f
                .recoveries
                .iter()
                .map(|x| x.recovered.len())
                .sum::<usize>()
                + reconciled_finished as usize,
            kept_running: r.reconciliations.iter().map(|x| x.kept_running).sum(),
            interrupted: f.recoveries.iter().map(|x| x.interrupted).sum(),
            rerun: f.recoveries.iter().map(|x| x.rerun.len()).sum(),
            redone: f.redone().to_string(),
            running_at,
            finished_at: f.finished_at.map_or("never".to_owned(), |t| t.to_string()),
        }
    };
    let (a, b) = (column(run), column(baseline));
    let how = if run.reconciliations.is_empty() {
        "job recovery"
    } else {
        "reconcile"
    };
    let mut s = String::from("\n== against a full restart (--compare-baseline)\n");
    let mut line = |what: &str, x: String, y: String| {
        s.push_str(&format!("{what:<22} {x:>14} {y:>14}\n"));
    };
    line("", how.to_owned(), "full restart".to_owned());
    line(
        "kept finished",
        a.kept_finished.to_string(),
        b.kept_finished.to_string(),
    );
    line(
        "kept running",
        a.kept_running.to_string(),
        b.kept_running.to_string(),
    );
    line(
        "tasks interrupted",
        a.interrupted.to_string(),
        b.interrupted.to_string(),
    );
    line("subtasks re-run", a.rerun.to_string(), b.rerun.to_string());
    line("work redone", a.redone, b.redone);
    line("RUNNING again at", a.running_at, b.running_at);
    line("job finished at", a.finished_at, b.finished_at);
    s
}

/// `expect.recoveries` and `expect.parallelism`.
pub fn check_batch(expect: &Expect, report: &RunReport, failures: &mut Vec<String>) {
    let figures = report.batch.as_ref();
    if let Some(want) = &expect.parallelism {
        for (vertex, &p) in want {
            let got = figures
                .and_then(|f| f.parallelism.iter().find(|(v, _)| v == vertex))
                .and_then(|(_, p)| *p);
            if got != Some(p) {
                failures.push(format!(
                    "expected {vertex} to run with parallelism {p}, got {}",
                    got.map_or("none (never initialized)".to_owned(), |g| g.to_string())
                ));
            }
        }
    }
    for (field, want, won_only) in [
        ("speculative attempts", &expect.speculative_attempts, false),
        ("speculative wins", &expect.speculative_wins, true),
    ] {
        let Some(want) = want else { continue };
        let mut got: Vec<String> = figures
            .map(|f| &f.speculative[..])
            .unwrap_or_default()
            .iter()
            .filter(|(_, won)| *won || !won_only)
            .map(|(s, _)| s.clone())
            .collect();
        got.sort();
        if &got != want {
            failures.push(format!(
                "expected {field} [{}], got [{}]",
                want.join(", "),
                got.join(", ")
            ));
        }
    }
    let Some(want) = &expect.recoveries else {
        return;
    };
    let got = figures.map_or(&[][..], |f| &f.recoveries[..]);
    if want.len() != got.len() {
        failures.push(format!(
            "expected {} JobManager recoveries, got {}",
            want.len(),
            got.len()
        ));
        return;
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        if let Some(n) = w.recovered {
            if n != g.recovered.len() as u64 {
                failures.push(format!(
                    "recovery {i}: expected {n} subtasks recovered as finished, got {}",
                    g.recovered.len()
                ));
            }
        }
        if let Some(names) = &w.rerun {
            let got = rerun_names(&report.graph, g);
            if &got != names {
                failures.push(format!(
                    "recovery {i}: expected re-run [{}], got [{}]",
                    names.join(", "),
                    got.join(", ")
                ));
            }
        }
        if let Some(full) = w.full_restart {
            if full != g.full_restart {
                failures.push(format!(
                    "recovery {i}: expected full_restart {full}, got {}",
                    g.full_restart
                ));
            }
        }
        if let Some(n) = w.late_reports {
            if n != u64::from(g.late_reports) {
                failures.push(format!(
                    "recovery {i}: expected {n} late partition reports, got {}",
                    g.late_reports
                ));
            }
        }
        if let Some(n) = w.interrupted {
            if n != u64::from(g.interrupted) {
                failures.push(format!(
                    "recovery {i}: expected {n} tasks interrupted by the lost leader, got {}",
                    g.interrupted
                ));
            }
        }
        if let Some(want) = &w.rerun_reasons {
            // Both in the reasons' declared order (`RerunReason::ALL`, the map's order).
            let got = reasons(g);
            let expected: Vec<(RerunReason, usize)> = want
                .iter()
                .filter(|&(_, &n)| n > 0)
                .map(|(&why, &n)| (why, n as usize))
                .collect();
            if got != expected {
                let list = |counts: &[(RerunReason, usize)]| {
                    counts
                        .iter()
                        .map(|(why, n)| format!("{} {n}", why.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                failures.push(format!(
                    "recovery {i}: expected re-run reasons [{}], got [{}]",
                    list(&expected),
                    list(&got)
                ));
            }
        }
    }
}
